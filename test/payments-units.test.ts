import { mnemonicToSeedSync } from '@scure/bip39';
import { HDKey } from '@scure/bip32';
import { describe, expect, it } from 'vitest';
import { covers, fromBaseUnits, toBaseUnits } from '../src/payments/amounts.js';
import { combine, failsAt, type AmlResult } from '../src/payments/aml/types.js';
import { parseSanctionsList, sanctionKey } from '../src/payments/aml/sanctions.js';
import { p2wpkh, NETWORK } from '@scure/btc-signer';
import { privateKeyToAddress } from 'viem/accounts';
import { bitcoinAddressFormat } from '../src/chains/utxo/formats.js';
import { evmAddressAt } from '../src/chains/evm/derive.js';
import { tronAddressAt } from '../src/chains/tron/derive.js';
import { parseUtxoXpub, utxoAddressAt, utxoKeyFits } from '../src/chains/utxo/derive.js';
import { parseXpub, XpubError } from '../src/chains/xpub.js';
import type { Environment } from '../src/store/index.js';
import { parseTronAddress } from '../src/chains/tron/address.js';

describe('amounts in base units, never floating point', () => {
  it('converts decimal strings exactly, including what a double gets wrong', () => {
    expect(toBaseUnits('0.1', 18) + toBaseUnits('0.2', 18)).toBe(toBaseUnits('0.3', 18));
    expect(0.1 + 0.2).not.toBe(0.3); // why this module exists
    expect(toBaseUnits('1.000000000000000001', 18)).toBe(1000000000000000001n);
    expect(toBaseUnits('9007199254740993', 0)).toBe(9007199254740993n); // 2^53 + 1
    expect(toBaseUnits('123456789.123456', 6)).toBe(123456789123456n);
    expect(toBaseUnits('1.50', 2)).toBe(150n);
    expect(toBaseUnits('1.5000000', 2)).toBe(150n); // trailing zeros are not precision
    expect(fromBaseUnits(1000000000000000001n, 18)).toBe('1.000000000000000001');
    expect(fromBaseUnits('1500000000000000000', 18)).toBe('1.5');
    expect(fromBaseUnits(0n, 6)).toBe('0');
    expect(fromBaseUnits(42n, 0)).toBe('42');
  });

  it('refuses what is not an amount, naming why', () => {
    expect(() => toBaseUnits('1.234', 2)).toThrow(/more than 2 decimal places/);
    expect(() => toBaseUnits('0', 18)).toThrow(/greater than 0/);
    expect(() => toBaseUnits('0.000', 18)).toThrow(/greater than 0/);
    for (const bad of ['-1', '1e18', '', '.5', '1.', '1,5', ' 1', '0x10', 'NaN', 'Infinity']) expect(() => toBaseUnits(bad, 18)).toThrow(/decimal string/);
  });

  it('tolerance in basis points, exactly', () => {
    expect(covers(99n, 100n, 100)).toBe(true); // 1 % tolerance
    expect(covers(98n, 100n, 100)).toBe(false);
    expect(covers(100n, 100n, 0)).toBe(true);
    expect(covers(99n, 100n, 0)).toBe(false);
    expect(covers(3333333333333333333n, 3333333333333333334n, 1)).toBe(true);
  });
});

describe('BIP32 derivation from an extended public key', () => {
  it('matches the published BIP32 test vector 1 public derivations', () => {
    // m/0H → m/0H/1 (public parent to public child)
    const m0h = parseXpub('xpub68Gmy5EdvgibQVfPdqkBBCHxA5htiqg55crXYuXoQRKfDBFA1WEjWgP6LHhwBZeNK1VTsfTFUHCdrfp1bgwQ9xv5ski8PX9rL2dZXvgGDnw');
    expect(m0h.deriveChild(1).publicExtendedKey).toBe('xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ');
    // m/0H/1/2H/2 → m/0H/1/2H/2/1000000000
    const deep = parseXpub('xpub6FHa3pjLCk84BayeJxFW2SP4XRrFd1JYnxeLeU8EqN3vDfZmbqBqaGJAyiLjTAwm6ZLRQUMv1ZACTj37sR62cfN7fe5JnJ7dh8zL4fiyLHV');
    expect(deep.deriveChild(1000000000).publicExtendedKey).toBe('xpub6H1LXWLaKsWFhvm6RVpEL9P4KfRZSW7abD2ttkWP3SSQvnyA8FSVqNTEcYFgJS2UaFcxupHiYkro49S8yGasTvXEYBVPamhGW6cFJodrTHy');
  });

  it('derives the EVM addresses wallets show for a seed (anvil/hardhat test mnemonic)', () => {
    const seed = mnemonicToSeedSync('test test test test test test test test test test test junk');
    const account = HDKey.fromMasterSeed(seed).derive("m/44'/60'/0'");
    const xpub = account.publicExtendedKey;
    expect(evmAddressAt(xpub, 0)).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    expect(evmAddressAt(xpub, 1)).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
    // The external-chain key (m/44'/60'/0'/0) gives the same addresses.
    expect(evmAddressAt(account.deriveChild(0).publicExtendedKey, 1)).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
  });

  it('never takes a private key, and says what is wrong with a bad one', () => {
    const seed = mnemonicToSeedSync('test test test test test test test test test test test junk');
    const xprv = HDKey.fromMasterSeed(seed).derive("m/44'/60'/0'").privateExtendedKey;
    expect(() => parseXpub(xprv)).toThrow(XpubError);
    expect(() => parseXpub(xprv)).toThrow(/PRIVATE key/);
    expect(() => parseXpub('xpub-not-really')).toThrow(/not a valid BIP32 extended public key/);
    expect(() => evmAddressAt('xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8', 0x80000000)).toThrow(/non-hardened/);
  });
});

const ABANDON = mnemonicToSeedSync('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
const BTC = bitcoinAddressFormat('mainnet')!;
const TBTC = bitcoinAddressFormat('testnet')!;
const env = (network: string, slug: string, bech32: string | null = 'bc'): Environment => ({
  id: 1, slug, upstreams: [], confirmations: 1, finalityDepth: 6, addressFormat: { bech32, pub_key_hash: 0, script_hash: 5 },
  network: { id: 1, uuid: '', slug: network, name: network, family: 'utxo', sort: 0, credits: { default: 1, methods: {} }, environments: [] },
});

describe('UTXO and Tron addresses from extended public keys', () => {
  it('BIP84: the published zpub and vpub of "abandon ... about" give its published addresses', () => {
    // BIP84's test vectors (account 0, m/84'/0'/0' and the testnet m/84'/1'/0').
    const zpub = parseUtxoXpub('zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs');
    expect(zpub).toMatchObject({ prefix: 'zpub', testnet: false, script: 'wpkh' });
    expect(utxoAddressAt(zpub, BTC, 0)).toBe('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
    expect(utxoAddressAt(zpub, BTC, 1)).toBe('bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g');
    const vpub = parseUtxoXpub('vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc');
    expect(utxoAddressAt(vpub, TBTC, 0)).toBe('tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl');
    // The same key in Litecoin's regtest prefixes: the same witness program, another hrp.
    expect(utxoAddressAt(vpub, { bech32: 'rltc', pub_key_hash: 111, script_hash: 58 }, 0)).toMatch(/^rltc1q/);
  });

  it('an xpub of the same account derives native segwit (BIP84 by default); a ypub nested segwit (BIP49 vector)', () => {
    const account = HDKey.fromMasterSeed(ABANDON).derive("m/84'/0'/0'");
    const x = parseUtxoXpub(account.publicExtendedKey);
    expect(x).toMatchObject({ prefix: 'xpub', script: 'default' });
    expect(utxoAddressAt(x, BTC, 0)).toBe('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
    // Independently: the private path m/84'/0'/0'/0/7 through btc-signer.
    expect(utxoAddressAt(x, BTC, 7)).toBe(p2wpkh(HDKey.fromMasterSeed(ABANDON).derive("m/84'/0'/0'/0/7").publicKey!, NETWORK).address);
    // The external-chain key (depth 4) derives the index directly.
    expect(utxoAddressAt(parseUtxoXpub(account.deriveChild(0).publicExtendedKey), BTC, 1)).toBe('bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g');
    const ypub = parseUtxoXpub('ypub6Ww3ibxVfGzLrAH1PNcjyAWenMTbbAosGNB6VvmSEgytSER9azLDWCxoJwW7Ke7icmizBMXrzBx9979FfaHxHcrArf3zbeJJJUZPf663zsP');
    expect(utxoAddressAt(ypub, BTC, 0)).toBe('37VucYSaXLCAsxYyAPfbSi9eh4iEcbShgf');
    // No segwit on the chain (Dogecoin-style): an xpub derives P2PKH.
    expect(utxoAddressAt(x, { bech32: null, pub_key_hash: 0x1e, script_hash: 0x16 }, 0)).toMatch(/^D/);
  });

  it('a key of the wrong network, a segwit key on a chain without segwit, and private keys are refused with the reason', () => {
    const zpub = parseUtxoXpub('zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs');
    expect(utxoKeyFits(zpub, env('bitcoin', 'mainnet'))).toBeUndefined();
    expect(utxoKeyFits(zpub, env('bitcoin', 'testnet'))).toMatch(/mainnet key \(zpub\); bitcoin-testnet takes a test-network key/);
    expect(utxoKeyFits(zpub, env('dogecoin', 'mainnet', null))).toMatch(/segwit/);
    const zprv = HDKey.fromMasterSeed(ABANDON, { public: 0x04b24746, private: 0x04b2430c }).derive("m/84'/0'/0'").privateExtendedKey;
    expect(zprv.startsWith('zprv')).toBe(true);
    expect(() => parseUtxoXpub(zprv)).toThrow(/PRIVATE key/);
    expect(() => parseUtxoXpub('zpub-nope')).toThrow(/not a valid extended public key/);
  });

  it("Tron: m/44'/195'/0'/0/i of the same seed, checked against an independent EVM derivation", () => {
    const xpub = HDKey.fromMasterSeed(ABANDON).derive("m/44'/195'/0'").publicExtendedKey;
    expect(tronAddressAt(xpub, 0)).toBe('TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH');
    for (const i of [0, 1, 19]) {
      // viem's private key -> address, then 0x41 + the same 20 bytes, base58check.
      const priv = HDKey.fromMasterSeed(ABANDON).derive(`m/44'/195'/0'/0/${i}`).privateKey!;
      const evm = privateKeyToAddress(`0x${Buffer.from(priv).toString('hex')}`);
      expect(tronAddressAt(xpub, i)).toBe(parseTronAddress(`41${evm.slice(2)}`).display);
    }
  });
});

describe('sanctions lists', () => {
  it('reads plain text, JSON and SDN_ADVANCED.XML', () => {
    expect(parseSanctionsList('# comment\n0x8589427373D6D84E98730D7795D8f6f8731FDA16\nXBT 12QtD5BFwRsdNsAZY76UVE1xyCGNTojH9h  # note\n')).toEqual([
      { address: '0x8589427373D6D84E98730D7795D8f6f8731FDA16', currency: 'ETH' },
      { address: '12QtD5BFwRsdNsAZY76UVE1xyCGNTojH9h', currency: 'XBT' },
    ]);
    expect(parseSanctionsList('["0x722122dF12D4e14e13Ac3b6895a86e84145b6967"]')).toEqual([{ address: '0x722122dF12D4e14e13Ac3b6895a86e84145b6967', currency: 'ETH' }]);
    expect(parseSanctionsList('{"addresses":[{"address":"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t","currency":"trx"}]}')).toEqual([{ address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', currency: 'TRX' }]);
    const xml = `<?xml version="1.0"?>
<Sanctions xmlns="https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/ADVANCED_XML">
  <ReferenceValueSets><FeatureTypeValues>
    <FeatureType ID="8">Birthdate</FeatureType>
    <FeatureType ID="345">Digital Currency Address - ETH</FeatureType>
    <FeatureType ID="344">Digital Currency Address - XBT</FeatureType>
  </FeatureTypeValues></ReferenceValueSets>
  <DistinctParties><DistinctParty FixedRef="1"><Profile ID="1" PartySubTypeID="3">
    <Feature ID="10" FeatureTypeID="8"><FeatureVersion ID="1"><DatePeriod/></FeatureVersion></Feature>
    <Feature ID="11" FeatureTypeID="345"><FeatureVersion ReliabilityID="1" ID="2"><VersionDetail DetailTypeID="1432">0x098B716B8Aaf21512996dC57EB0615e2383E2f96</VersionDetail></FeatureVersion><IdentityReference IdentityID="1" IdentityFeatureLinkTypeID="1"/></Feature>
    <Feature ID="12" FeatureTypeID="344"><FeatureVersion ReliabilityID="1" ID="3"><VersionDetail DetailTypeID="1432">1ECeZBxCVJ8Wm2JSN3Cyc6rge2gnvD3W5K</VersionDetail></FeatureVersion></Feature>
  </Profile></DistinctParty></DistinctParties>
</Sanctions>`;
    expect(parseSanctionsList(xml)).toEqual([
      { address: '0x098B716B8Aaf21512996dC57EB0615e2383E2f96', currency: 'ETH' },
      { address: '1ECeZBxCVJ8Wm2JSN3Cyc6rge2gnvD3W5K', currency: 'XBT' },
    ]);
    expect(() => parseSanctionsList('<xml><nothing/></xml>')).toThrow(/SDN_ADVANCED/);
    expect(() => parseSanctionsList('# only comments\n')).toThrow(/no addresses/);
    expect(() => parseSanctionsList('{"nope": 1}')).toThrow(/addresses/);
  });

  it('matches EVM addresses whatever their case, others exactly', () => {
    expect(sanctionKey('0x8589427373D6D84E98730D7795D8f6f8731FDA16')).toBe(sanctionKey('0x8589427373d6d84e98730d7795d8f6f8731fda16'));
    expect(sanctionKey('1ECeZBxCVJ8Wm2JSN3Cyc6rge2gnvD3W5K')).toBe('1ECeZBxCVJ8Wm2JSN3Cyc6rge2gnvD3W5K');
  });
});

describe('AML verdicts', () => {
  const r = (risk_level: AmlResult['risk_level'], score: number): AmlResult => ({ provider: 'p', score, risk_level, details: [], report_url: null, checked_at: '2026-01-01T00:00:00.000Z' });
  it('fails at or above the threshold; unknown (provider none) never fails', () => {
    expect(failsAt('high', 'high')).toBe(true);
    expect(failsAt('medium', 'high')).toBe(false);
    expect(failsAt('medium', 'medium')).toBe(true);
    expect(failsAt('severe', 'severe')).toBe(true);
    expect(failsAt('high', 'severe')).toBe(false);
    expect(failsAt('unknown', 'medium')).toBe(false);
  });
  it('the worst sender decides an order with several', () => {
    expect(combine([r('low', 10), r('high', 75), r('medium', 50)])).toMatchObject({ risk_level: 'high', score: 75 });
  });
});
