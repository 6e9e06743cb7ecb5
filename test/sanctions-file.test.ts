import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Address } from '@scure/btc-signer';
import { parseSanctionsList } from '../src/payments/aml/sanctions.js';
import { cli } from './helpers/cli.js';
import { startTestService, type TestService } from './helpers/service.js';

// Issue 21: a malformed sanctions file named neither the file nor the line, and lines that were
// not addresses were loaded as "sanctioned addresses". Every format, every chain family rpcctl
// watches, and both ways a list is loaded (serve's payments.aml.sanctions_file, admin aml load).

const dir = mkdtempSync(join(tmpdir(), 'rpcctl-sanctions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hash = new Uint8Array(20).fill(7);
const LTC_SEGWIT = Address({ bech32: 'ltc', pubKeyHash: 0x30, scriptHash: 0x32, wif: 0xb0 }).encode({ type: 'wpkh', hash });
const LTC_LEGACY = Address({ bech32: 'ltc', pubKeyHash: 0x30, scriptHash: 0x32, wif: 0xb0 }).encode({ type: 'pkh', hash });
const DOGE = Address({ bech32: '', pubKeyHash: 0x1e, scriptHash: 0x16, wif: 0x9e }).encode({ type: 'pkh', hash });
const EVERY_FAMILY = [
  ['ETH', '0x8589427373D6D84E98730D7795D8f6f8731FDA16'],
  ['ETH', '0x8589427373d6d84e98730d7795d8f6f8731fda16'],
  ['XBT', '12QtD5BFwRsdNsAZY76UVE1xyCGNTojH9h'],
  ['XBT', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq'],
  ['LTC', LTC_SEGWIT],
  ['LTC', LTC_LEGACY],
  ['DOGE', DOGE],
  ['TRX', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'],
  ['XLM', 'GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN'],
  ['SOL', '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM'],
] as const;
// Chains rpcctl does not watch keep their entries: OFAC's list is loaded whole.
const XMR = '44AFFq5kSiGBoZ4NMDwYtN18obc8AemS33DBLWs3H7otXft3XjrpDtQGv7SqSsaBYBb98uNbr2VBBEt7f2wfn3RVGQBEP3A';

function sdnXml(features: Array<[string, string]>): string {
  const types = [...new Set(features.map(([c]) => c))];
  return [
    '<?xml version="1.0"?>',
    '<Sanctions>',
    '  <ReferenceValueSets><FeatureTypeValues>',
    ...types.map((c, i) => `    <FeatureType ID="${300 + i}">Digital Currency Address - ${c}</FeatureType>`),
    '  </FeatureTypeValues></ReferenceValueSets>',
    '  <DistinctParties><DistinctParty FixedRef="1"><Profile ID="1">',
    ...features.map(([c, a], i) => `    <Feature ID="${i}" FeatureTypeID="${300 + types.indexOf(c)}">\n      <FeatureVersion ID="${i}">\n        <VersionDetail DetailTypeID="1432">${a}</VersionDetail>\n      </FeatureVersion>\n    </Feature>`),
    '  </Profile></DistinctParty></DistinctParties>',
    '</Sanctions>',
  ].join('\n');
}

describe('every supported format loads valid addresses of every chain family', () => {
  it('plain list, with and without the currency, comments and blank lines', () => {
    const text = ['# list', '', ...EVERY_FAMILY.map(([, a]) => `${a}   # no currency: known by its shape`), ...EVERY_FAMILY.map(([c, a]) => `${c} ${a}`), `XMR ${XMR}`, ''].join('\n');
    const list = parseSanctionsList(text, 'list.txt');
    expect(list).toHaveLength(EVERY_FAMILY.length * 2 + 1);
    expect(list.slice(0, EVERY_FAMILY.length).map((x) => x.currency)).toEqual(EVERY_FAMILY.map(([c]) => c));
    expect(list.at(-1)).toEqual({ address: XMR, currency: 'XMR' });
  });

  it('JSON: strings and {address, currency}', () => {
    const text = JSON.stringify({ addresses: [...EVERY_FAMILY.map(([, a]) => a), ...EVERY_FAMILY.map(([currency, address]) => ({ address, currency })), { address: XMR, currency: 'xmr' }] }, null, 2);
    expect(parseSanctionsList(text, 'list.json')).toHaveLength(EVERY_FAMILY.length * 2 + 1);
  });

  it('SDN_ADVANCED.XML', () => {
    const list = parseSanctionsList(sdnXml([...EVERY_FAMILY.map(([c, a]) => [c, a] as [string, string]), ['XMR', XMR]]), 'SDN_ADVANCED.XML');
    expect(list.map((x) => x.currency)).toEqual([...EVERY_FAMILY.map(([c]) => c), 'XMR']);
  });

  it('an upper-case bech32 address is stored in its canonical form, so it matches what the chain reports', () => {
    expect(parseSanctionsList('XBT BC1QAR0SRRR7XFKVY5L643LYDNW9RE59GTZZWF5MDQ', 'l')).toEqual([{ address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', currency: 'XBT' }]);
  });
});

describe('what is not an address is refused as file:line: what is wrong', () => {
  const refused: Array<[string, string, RegExp]> = [
    ['list.txt', '# ok\n0x8589427373D6D84E98730D7795D8f6f8731FDA16\nhello world\n', /^list\.txt:3: "world" is not a valid HELLO address/],
    ['list.txt', '# ok\n0x8589427373D6D84E98730D7795D8f6f8731FDA16\nhello\n', /^list\.txt:3: "hello" is not an address of a chain rpcctl knows .*for another chain write "CURRENCY address"/],
    ['list.txt', '# ok\n\nSanctioned entity: Foo Bar\n', /^list\.txt:3: expected "address" or "CURRENCY address", got "Sanctioned entity: Foo Bar"/],
    ['list.txt', '0x8589427373D6D84E98730D7795D8f6f8731FDA16\nnot-an-address\n', /^list\.txt:2: "not-an-address" is not an address/],
    ['list.txt', 'ETH 0x1234\n', /^list\.txt:1: "0x1234" is not a valid ETH address \(EVM: must be 0x followed by 40 hex digits\)/],
    ['list.txt', '\nXBT 12QtD5BFwRsdNsAZY76UVE1xyCGNTojH9X\n', /^list\.txt:2: .* is not a valid XBT address/],
    ['list.txt', 'TRX TXYZ\n', /^list\.txt:1: "TXYZ" is not a valid TRX address/],
    ['list.txt', 'XLM GABC\n', /^list\.txt:1: "GABC" is not a valid XLM address/],
    ['list.txt', 'SOL 0x8589427373D6D84E98730D7795D8f6f8731FDA16\n', /^list\.txt:1: .* is not a valid SOL address \(Solana: must be a Solana address/],
    // 44 base58 characters that are not 32 bytes: not taken for a Solana wallet.
    ['list.txt', 'SOL 9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWMzzzz\n', /^list\.txt:1: .* is not a valid SOL address/],
    ['list.txt', `LTC ${'0x8589427373D6D84E98730D7795D8f6f8731FDA16'}\n`, /^list\.txt:1: .* is not a valid LTC address/],
    ['list.txt', 'XMR hi\n', /^list\.txt:1: "hi" is not a valid XMR address/],
    ['list.txt', 'E$ 0x8589427373D6D84E98730D7795D8f6f8731FDA16\n', /^list\.txt:1: "E\$" is not a currency code/],
    ['list.txt', '# only comments\n\n', /^list\.txt: no addresses found/],
    ['list.json', '[\n  "0x8589427373D6D84E98730D7795D8f6f8731FDA16",\n  "nope"\n]', /^list\.json:3: addresses\[1\]: "nope" is not an address/],
    ['list.json', '{"addresses": [\n  {"address": "TXYZ", "currency": "TRX"}\n]}', /^list\.json:2: addresses\[0\]: "TXYZ" is not a valid TRX address/],
    ['list.json', '[\n  "0x8589427373D6D84E98730D7795D8f6f8731FDA16",\n  42\n]', /^list\.json:\d+: addresses\[1\]: expected a string or \{address, currency\}, got 42/],
    ['list.json', '[\n  {"address": "0x8589427373D6D84E98730D7795D8f6f8731FDA16", "currency": 1}\n]', /^list\.json:2: addresses\[0\]: "currency" must be a string/],
    ['list.json', '{"nope": 1}', /^list\.json: JSON must be an array/],
    ['list.json', '[1,,]', /^list\.json(:\d+)?: not valid JSON/],
    ['SDN_ADVANCED.XML', sdnXml([['ETH', '0x8589427373D6D84E98730D7795D8f6f8731FDA16'], ['ETH', 'Tornado Cash']]), /^SDN_ADVANCED\.XML:14: "Tornado Cash" is not a valid ETH address/],
    ['SDN_ADVANCED.XML', '<xml><nothing/></xml>', /^SDN_ADVANCED\.XML: XML without "Digital Currency Address"/],
  ];
  it.each(refused)('%s: %j', (file, text, message) => {
    expect(() => parseSanctionsList(text, file)).toThrow(message);
  });
});

describe('both ways a list is loaded say where it is wrong', () => {
  let t: TestService | undefined;
  afterAll(async () => { await t?.stop(); });

  it('rpcctl admin aml load FILE refuses the file, keeps the loaded list, and names file:line', async () => {
    t = await startTestService();
    const good = join(dir, 'good.txt');
    writeFileSync(good, 'ETH 0x8589427373D6D84E98730D7795D8f6f8731FDA16\n');
    expect((await cli(['admin', 'aml', 'load', good, '--data-dir', t.dataDir])).code).toBe(0);
    const bad = join(dir, 'bad.txt');
    writeFileSync(bad, '# OFAC export\nETH 0x722122dF12D4e14e13Ac3b6895a86e84145b6967\nSee the notice at https://example.gov\n');
    const r = await cli(['admin', 'aml', 'load', bad, '--data-dir', t.dataDir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: ${bad}:3: expected "address" or "CURRENCY address", got "See the notice at https://example.gov"\n`);
    const rows = await t.store.db.selectFrom('aml_sanctions').select('address').execute();
    expect(rows.map((x) => x.address)).toEqual(['0x8589427373D6D84E98730D7795D8f6f8731FDA16']);
  });

  it('serve with payments.aml.sanctions_file does not start on a bad list, and says which line', async () => {
    const bad = join(dir, 'bad-serve.txt');
    writeFileSync(bad, 'ETH 0x722122dF12D4e14e13Ac3b6895a86e84145b6967\n\nLazarus Group\n');
    await expect(startTestService({ payments: { aml: { provider: 'sanctions-list', sanctions_file: bad } } }))
      .rejects.toThrow(`${bad}:3: "Group" is not a valid LAZARUS address`);
    const missing = join(dir, 'missing.txt');
    await expect(startTestService({ payments: { aml: { provider: 'sanctions-list', sanctions_file: missing } } }))
      .rejects.toThrow(`payments.aml.sanctions_file: cannot read ${missing}: no such file`);
  });
});
