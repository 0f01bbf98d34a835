import { z } from 'zod';
import { zId } from '../../platform/ids.js';

export const blockInput = z.object({ userId: zId });
