import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEARCH_MATCH_LIMIT } from '../../src/routers/territories/territories.queries.js';
import { newTerritory } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

// Territory search: accent- and case-insensitive partial matching, relevance order, stable paging, bounded results.
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

interface Item {
  id: string;
  name: string;
}
interface Page {
  items: Item[];
  totalCount: number;
  totalPages: number;
  hasNextPage: boolean;
}
const search = async (query: string) => {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/territories/search?${query}` });
  expect(res.statusCode, query).toBe(200);
  return (res.json() as Item[]).map((x) => x.id);
};
const paged = async (query: string) => {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/territories/search/paged?${query}` });
  expect(res.statusCode, query).toBe(200);
  return res.json() as Page;
};
const q = (value: string) => encodeURIComponent(value);

describe('accents and case', () => {
  let saoBento: { id: string }, semAcento: { id: string }, capital: { id: string }, pending: { id: string };
  beforeAll(async () => {
    saoBento = await newTerritory(t, { name: 'São Bento Acentuado', city: 'Ribeirão Zeta', state: 'ZP' });
    semAcento = await newTerritory(t, { name: 'Sao Bento Sem Acento', city: 'Ribeirao Zeta', state: 'ZP' });
    capital = await newTerritory(t, { name: 'Jardim Zeta', city: 'São Zetópolis', state: 'ZÉ' });
    pending = await newTerritory(t, { name: 'São Bento Pendente', city: 'Ribeirão Zeta', state: 'ZP', status: 'PENDING' });
  });

  it('finds accented values from unaccented terms and the other way round, in any case', async () => {
    expect(await search(`q=${q('sao bento')}`)).toEqual([saoBento.id, semAcento.id]);
    expect(await search(`q=${q('SÃO BENTO')}`)).toEqual([saoBento.id, semAcento.id]);
    expect(await search(`q=${q('são zetopolis')}`)).toEqual([capital.id]);
    expect(await search(`city=${q('RIBEIRAO ZETA')}`)).toEqual([saoBento.id, semAcento.id]);
    expect(await search(`city=${q('ribeirão')}`)).toEqual([saoBento.id, semAcento.id]);
    expect(await search(`state=${q('ze')}`)).toEqual([capital.id]);
    expect(await search(`state=${q('zé')}&q=${q('JARDIM')}`)).toEqual([capital.id]);
    expect(await search(`q=${q('bento')}`)).not.toContain(pending.id);
  });

  it('matches partially: anywhere for terms with a word of 3+ characters, as a prefix for shorter ones', async () => {
    expect(await search(`q=${q('ENTO SEM')}`)).toEqual([semAcento.id]);
    expect(await search(`city=${q('rão ze')}`)).toEqual([saoBento.id, semAcento.id]);
    // Two letters: only values starting with them.
    expect(await search(`state=${q('zp')}`)).toEqual([saoBento.id, semAcento.id]);
    expect(await search(`state=${q('p')}`)).toEqual([]);
    // No word of 3 letters: a prefix as well (a trigram index has nothing to look up for it).
    expect(await search(`q=${q('s b')}`)).toEqual([]);
    expect(await search(`q=${q('são b')}`)).toEqual([saoBento.id, semAcento.id]);
  });
});

describe('relevance, then name', () => {
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    // Created in an order unrelated to the expected one.
    for (const [key, name, city] of [
      ['cityOnly', 'Alto Qualquer', 'Porto Kappa'],
      ['contains2', 'Vila Kappa Norte', 'Qualquer'],
      ['prefix2', 'Kappa Sul', 'Qualquer'],
      ['exact', 'Kappa', 'Qualquer'],
      ['contains1', 'Bairro Kappa', 'Qualquer'],
      ['prefix1', 'Kappa Leste', 'Qualquer'],
      ['accentedPrefix', 'Káppa Centro', 'Qualquer'],
    ] as const) {
      ids[key] = (await newTerritory(t, { name, city, state: 'KP' })).id;
    }
  });

  it('orders the name equal to q, names starting with it, names containing it, then city or state matches; by name within each', async () => {
    expect(await search('q=kappa')).toEqual([ids.exact, ids.accentedPrefix, ids.prefix1, ids.prefix2, ids.contains1, ids.contains2, ids.cityOnly]);
    // city and state narrow without changing the order.
    expect(await search('q=kappa&state=kp&city=qualquer')).toEqual([ids.exact, ids.accentedPrefix, ids.prefix1, ids.prefix2, ids.contains1, ids.contains2]);
    // Without q, by name.
    expect(await search('state=kp')).toEqual([ids.cityOnly, ids.contains1, ids.exact, ids.accentedPrefix, ids.prefix1, ids.prefix2, ids.contains2]);
  });

  it('breaks ties between names equal up to case and accents by id', async () => {
    const a = await newTerritory(t, { name: 'Mesmo Nome Tie', city: 'Cidade A', state: 'TI' });
    const b = await newTerritory(t, { name: 'MESMO NOMÉ TIE', city: 'Cidade B', state: 'TI' });
    expect(await search('q=mesmo%20nome')).toEqual([a.id, b.id].sort());
  });

  it('pages stably: page after page is the one-page answer, with nothing repeated or missed', async () => {
    const all = await search('q=kappa&take=100');
    const pages: string[] = [];
    for (let pageNumber = 1; pageNumber <= 4; pageNumber++) {
      const page = await paged(`q=kappa&pageNumber=${pageNumber}&pageSize=2`);
      expect(page.totalCount).toBe(all.length);
      expect(page.hasNextPage).toBe(pageNumber < 4);
      pages.push(...page.items.map((x) => x.id));
    }
    expect(pages).toEqual(all);
    for (let skip = 0; skip < all.length; skip += 3) expect(await search(`q=kappa&skip=${skip}&take=3`)).toEqual(all.slice(skip, skip + 3));
  });
});

describe('results bounded by design', () => {
  beforeAll(async () => {
    await t.sql(
      `insert into territory (id, created_at_utc, name, description, city, state, latitude, longitude, radius_km, status, tags, enabled_flags)
       select gen_random_uuid(), now(), 'Omega Lote ' || i, null, 'Omegaville', 'OM', -10, -50, 5, 'ACTIVE', '{}', '{}'
         from generate_series(1, $1::int + 5) as i`,
      [SEARCH_MATCH_LIMIT],
    );
    await t.sql('analyze territory');
  });

  it(`answers at most ${SEARCH_MATCH_LIMIT} matches; the envelope counts exactly those`, async () => {
    const pageSize = 100;
    const lastPage = SEARCH_MATCH_LIMIT / pageSize;
    const first = await paged(`q=omega&pageSize=${pageSize}`);
    expect(first).toMatchObject({ totalCount: SEARCH_MATCH_LIMIT, totalPages: lastPage, hasNextPage: true });
    const last = await paged(`q=omega&pageSize=${pageSize}&pageNumber=${lastPage}`);
    expect(last.items).toHaveLength(pageSize);
    expect(last.hasNextPage).toBe(false);
    const beyond = await paged(`q=omega&pageSize=${pageSize}&pageNumber=${lastPage + 1}`);
    expect(beyond.items).toEqual([]);
    expect(await search(`q=omega&skip=${SEARCH_MATCH_LIMIT - 2}&take=10`)).toHaveLength(2);
    // The first pages are the most relevant, whatever the bound: the name equal to q would come first.
    const exact = await newTerritory(t, { name: 'Omega', city: 'Omegaville', state: 'OM' });
    expect((await paged('q=omega&pageSize=1')).items[0]!.id).toBe(exact.id);
    // Below the bound the count is exact.
    expect((await paged('q=omega%20lote%201000')).totalCount).toBe(1);
    expect((await paged('city=omegaville&q=lote%2010')).totalCount).toBe(17); // lote 10, 100-109, 1000-1005
  });
});
