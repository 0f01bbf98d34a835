// ESLint looks up the configuration nearest to each file: the client SDK's files get the repository's rules, with
// the ignores written relative to this folder (the built package in dist/, the generated REST types).
import root from '../eslint.config.js';

export default [{ ignores: ['dist/', 'src/rest-types.ts'] }, ...root];
