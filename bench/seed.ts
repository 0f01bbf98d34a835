import type pg from 'pg';

/** How much data a run loads. */
export interface BenchSize {
  mode: 'full' | 'smoke';
  territories: number;
  /** Posts in the feed's territory (feed-read.ts); unset: the mode's (200k, smoke 5k). The small world of flat.ts sets it. */
  feedPosts?: number;
  /** Rows of map content in the map's territory (map-pins.ts); unset: the mode's (~39k, smoke a fiftieth). */
  mapRows?: number;
}

export const SIZES: Record<BenchSize['mode'], BenchSize> = {
  full: { mode: 'full', territories: 100_000 },
  smoke: { mode: 'smoke', territories: 2_000 },
};

/** A country-sized box (roughly Brazil): every seeded territory and every random nearby point is inside it. */
export const COUNTRY_BOX = { minLat: -33.5, maxLat: 5.0, minLng: -73.5, maxLng: -35.0 } as const;

/** Cities the territories cluster around (most people live in cities); the rest spread over the whole box. */
export const CITIES: ReadonlyArray<{ city: string; state: string; lat: number; lng: number }> = [
  { city: 'São Paulo', state: 'SP', lat: -23.55, lng: -46.63 },
  { city: 'Campinas', state: 'SP', lat: -22.91, lng: -47.06 },
  { city: 'Santos', state: 'SP', lat: -23.96, lng: -46.33 },
  { city: 'Ribeirão Preto', state: 'SP', lat: -21.18, lng: -47.81 },
  { city: 'Rio de Janeiro', state: 'RJ', lat: -22.91, lng: -43.17 },
  { city: 'Niterói', state: 'RJ', lat: -22.88, lng: -43.1 },
  { city: 'Belo Horizonte', state: 'MG', lat: -19.92, lng: -43.94 },
  { city: 'Uberlândia', state: 'MG', lat: -18.92, lng: -48.28 },
  { city: 'Vitória', state: 'ES', lat: -20.32, lng: -40.34 },
  { city: 'Curitiba', state: 'PR', lat: -25.43, lng: -49.27 },
  { city: 'Londrina', state: 'PR', lat: -23.31, lng: -51.16 },
  { city: 'Florianópolis', state: 'SC', lat: -27.6, lng: -48.55 },
  { city: 'Joinville', state: 'SC', lat: -26.3, lng: -48.85 },
  { city: 'Porto Alegre', state: 'RS', lat: -30.03, lng: -51.23 },
  { city: 'Pelotas', state: 'RS', lat: -31.77, lng: -52.34 },
  { city: 'Brasília', state: 'DF', lat: -15.79, lng: -47.88 },
  { city: 'Goiânia', state: 'GO', lat: -16.69, lng: -49.26 },
  { city: 'Alto Paraíso de Goiás', state: 'GO', lat: -14.13, lng: -47.51 },
  { city: 'Campo Grande', state: 'MS', lat: -20.47, lng: -54.62 },
  { city: 'Cuiabá', state: 'MT', lat: -15.6, lng: -56.1 },
  { city: 'Salvador', state: 'BA', lat: -12.97, lng: -38.5 },
  { city: 'Feira de Santana', state: 'BA', lat: -12.27, lng: -38.97 },
  { city: 'Recife', state: 'PE', lat: -8.05, lng: -34.9 },
  { city: 'Olinda', state: 'PE', lat: -8.01, lng: -34.86 },
  { city: 'Fortaleza', state: 'CE', lat: -3.73, lng: -38.52 },
  { city: 'Natal', state: 'RN', lat: -5.79, lng: -35.21 },
  { city: 'João Pessoa', state: 'PB', lat: -7.12, lng: -34.86 },
  { city: 'Maceió', state: 'AL', lat: -9.67, lng: -35.74 },
  { city: 'Aracaju', state: 'SE', lat: -10.91, lng: -37.07 },
  { city: 'Teresina', state: 'PI', lat: -5.09, lng: -42.8 },
  { city: 'São Luís', state: 'MA', lat: -2.53, lng: -44.3 },
  { city: 'Belém', state: 'PA', lat: -1.46, lng: -48.49 },
  { city: 'Manaus', state: 'AM', lat: -3.12, lng: -60.02 },
  { city: 'Porto Velho', state: 'RO', lat: -8.76, lng: -63.9 },
  { city: 'Rio Branco', state: 'AC', lat: -9.97, lng: -67.81 },
  { city: 'Palmas', state: 'TO', lat: -10.18, lng: -48.33 },
  { city: 'Macapá', state: 'AP', lat: 0.03, lng: -51.07 },
  { city: 'Boa Vista', state: 'RR', lat: 2.82, lng: -60.67 },
];

export const NAME_PREFIXES = [
  'Vila',
  'Jardim',
  'Parque',
  'Alto',
  'Morro',
  'Praia',
  'Recanto',
  'Lagoa',
  'Serra',
  'Campo',
  'Santa',
  'São',
  'Bairro',
  'Conjunto',
  'Chácara',
];
export const NAME_WORDS = [
  'Aurora',
  'Esperança',
  'Madalena',
  'Primavera',
  'das Flores',
  'dos Pinheiros',
  'Bela Vista',
  'Boa Vista',
  'Alegre',
  'Novo Horizonte',
  'do Sol',
  'da Lua',
  'Verde',
  'Azul',
  'das Palmeiras',
  'dos Ipês',
  'Paraíso',
  'Industrial',
  'Universitário',
  'Central',
  'Imperial',
  'Colonial',
  'Tropical',
  'Europa',
  'América',
  'Brasil',
  'Cristina',
  'Teresa',
  'Luzia',
  'Helena',
  'Marina',
  'Clara',
  'do Mar',
  'da Serra',
  'do Vale',
  'dos Lagos',
  'das Águas',
  'do Bosque',
  'das Acácias',
  'Santo Antônio',
];
const TAGS = [
  'arts',
  'nightlife',
  'food',
  'commerce',
  'heritage',
  'hills',
  'lagoon',
  'nature',
  'waterfalls',
  'beach',
  'university',
  'industry',
  'market',
  'park',
  'river',
];

const sqlText = (s: string) => `'${s.replace(/'/g, "''")}'`;
const sqlArray = (items: readonly (string | number)[], cast: string) =>
  `array[${items.map((v) => (typeof v === 'number' ? String(v) : sqlText(v))).join(', ')}]::${cast}[]`;

/**
 * A step that loads data with set-based SQL. Scenarios that read the same data share the step (it runs once);
 * it answers the row counts it loaded, reported in the results.
 */
export interface SeedStep {
  name: string;
  run(db: pg.Client, size: BenchSize): Promise<Record<string, number>>;
}

/**
 * ACTIVE territories: 80 % clustered around the cities (±0.6°), 20 % anywhere in the country box; unique names
 * (prefix + word + sequence, so the name/city/state unique index holds), two tags each, creation times spread
 * over the past year. `setseed` makes every run load the same data.
 */
export const territoriesSeed: SeedStep = {
  name: 'territories',
  async run(db, size) {
    const combos = NAME_PREFIXES.length * NAME_WORDS.length;
    await db.query('select setseed(0.42)');
    await db.query(
      `
      insert into territory (id, created_at_utc, name, description, city, state, latitude, longitude, radius_km, status, tags, enabled_flags)
      select gen_random_uuid(),
             now() - make_interval(secs => g.i * 300),
             p.prefixes[1 + g.i % ${NAME_PREFIXES.length}] || ' ' || p.words[1 + (g.i / ${NAME_PREFIXES.length}) % ${NAME_WORDS.length}]
               || case when g.i >= ${combos} then ' ' || (g.i / ${combos} + 1)::text else '' end,
             case when g.i % 3 = 0 then null else 'Neighbourhood of ' || p.cities[1 + g.c] end,
             p.cities[1 + g.c], p.states[1 + g.c],
             case when g.clustered then least(${COUNTRY_BOX.maxLat}, greatest(${COUNTRY_BOX.minLat}, p.lats[1 + g.c] + (random() - 0.5) * 1.2))
                  else ${COUNTRY_BOX.minLat} + random() * ${COUNTRY_BOX.maxLat - COUNTRY_BOX.minLat} end,
             case when g.clustered then least(${COUNTRY_BOX.maxLng}, greatest(${COUNTRY_BOX.minLng}, p.lngs[1 + g.c] + (random() - 0.5) * 1.2))
                  else ${COUNTRY_BOX.minLng} + random() * ${COUNTRY_BOX.maxLng - COUNTRY_BOX.minLng} end,
             (array[1, 2, 3, 5, 5, 5, 10])[1 + g.i % 7],
             'ACTIVE',
             array[p.tags[1 + g.i % ${TAGS.length}], p.tags[1 + (g.i / 7 + 3) % ${TAGS.length}]],
             '{}'::text[]
        from (select i, (i * 7919) % ${CITIES.length} as c, i % 5 <> 0 as clustered from generate_series(0, $1::int - 1) as s(i)) g,
             (select ${sqlArray(NAME_PREFIXES, 'text')} as prefixes, ${sqlArray(NAME_WORDS, 'text')} as words,
                     ${sqlArray(
                       CITIES.map((c) => c.city),
                       'text',
                     )} as cities, ${sqlArray(
                       CITIES.map((c) => c.state),
                       'text',
                     )} as states,
                     ${sqlArray(
                       CITIES.map((c) => c.lat),
                       'float8',
                     )} as lats, ${sqlArray(
                       CITIES.map((c) => c.lng),
                       'float8',
                     )} as lngs,
                     ${sqlArray(TAGS, 'text')} as tags) p`,
      [size.territories],
    );
    await db.query('analyze territory');
    const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from territory where status = 'ACTIVE'`);
    return { territories: rows[0]?.n ?? 0 };
  },
};

/** The user the authenticated scenarios call as (its token is minted with the API's signing key). */
export async function insertBenchUser(db: pg.Client): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `insert into app_user (id, created_at_utc, display_name, auth_provider, external_id, identity_verification_status)
     values (gen_random_uuid(), now(), 'Bench User', 'bench', 'bench-user', 'Unverified') returning id`,
  );
  const id = rows[0]?.id;
  if (!id) throw new Error('could not insert the bench user');
  return id;
}

/** Deterministic PRNG (mulberry32), so each run sends the same requests. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const benchUserIds = new WeakMap<pg.Pool, Promise<string>>();
/** The bench user's id, for the bare routes (the API reads it from the token; a bare route looks it up once). */
export function benchViewerId(pool: pg.Pool): Promise<string> {
  let id = benchUserIds.get(pool);
  if (!id) {
    id = pool
      .query<{ id: string }>(`select id from app_user where auth_provider = 'bench' and external_id = 'bench-user'`)
      .then(({ rows }) => rows[0]?.id ?? '00000000-0000-0000-0000-000000000000');
    benchUserIds.set(pool, id);
  }
  return id;
}
