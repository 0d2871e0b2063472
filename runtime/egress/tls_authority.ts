/**
 * The egress proxy's certificate authority: a fresh ECDSA P-256 key pair per runtime start,
 * kept in the data dir (0600) and in memory, never installed anywhere. Chromium trusts it
 * for its own profile only, by the SPKI pin `--ignore-certificate-errors-spki-list` (nothing
 * else relaxed); the proxy presents a leaf minted here for each host it terminates TLS for.
 * X.509 comes from `@peculiar/x509` over WebCrypto: no crypto is written here.
 *
 * @module
 */
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

const ALG = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
/** Leaves live a day (a runtime restart mints a new authority anyway). */
const LEAF_DAYS = 1;
/** The authority lives a week at most; it is replaced at every start. */
const CA_DAYS = 7;

/** A leaf for one host: its chain (leaf, then the authority) and key, as PEM. */
export interface LeafPem {
  cert: string;
  key: string;
}

/** The authority of one runtime start. */
export class TlsAuthority {
  readonly #ca: x509.X509Certificate;
  readonly #caKey: CryptoKey;
  readonly #leafKeys: CryptoKeyPair;
  readonly #leafKeyPem: string;
  readonly #leaves = new Map<string, Promise<LeafPem>>();
  /** Base64 SHA-256 of the authority's SubjectPublicKeyInfo: the pin Chromium gets. */
  readonly spkiPin: string;
  /** The authority's certificate (PEM), for tests that trust it. */
  readonly certPem: string;

  private constructor(
    ca: x509.X509Certificate,
    caKey: CryptoKey,
    leafKeys: CryptoKeyPair,
    leafKeyPem: string,
    pin: string,
  ) {
    this.#ca = ca;
    this.#caKey = caKey;
    this.#leafKeys = leafKeys;
    this.#leafKeyPem = leafKeyPem;
    this.spkiPin = pin;
    this.certPem = ca.toString("pem");
  }

  /** A fresh authority; with `dir`, its certificate and key are written there (0600). */
  static async create(dir?: string): Promise<TlsAuthority> {
    const keys = await crypto.subtle.generateKey(ALG, true, ["sign", "verify"]) as CryptoKeyPair;
    const now = Date.now();
    const ca = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: serial(),
      name: `CN=Omotai egress proxy ${new Date(now).toISOString()}, O=Omotai (this runtime only)`,
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + CA_DAYS * 86_400_000),
      keys,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
          true,
        ),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    const spki = await crypto.subtle.exportKey("spki", keys.publicKey);
    const pin = btoa(
      String.fromCharCode(...new Uint8Array(await crypto.subtle.digest("SHA-256", spki))),
    );
    const leafKeys = await crypto.subtle.generateKey(ALG, true, [
      "sign",
      "verify",
    ]) as CryptoKeyPair;
    const leafKeyPem = x509.PemConverter.encode(
      await crypto.subtle.exportKey("pkcs8", leafKeys.privateKey),
      "PRIVATE KEY",
    );
    if (dir) {
      await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
      const caKeyPem = x509.PemConverter.encode(
        await crypto.subtle.exportKey("pkcs8", keys.privateKey),
        "PRIVATE KEY",
      );
      await Deno.writeTextFile(`${dir}/ca.pem`, ca.toString("pem"), { mode: 0o600 });
      await Deno.writeTextFile(`${dir}/ca.key`, caKeyPem, { mode: 0o600 });
      await Deno.chmod(`${dir}/ca.key`, 0o600);
    }
    return new TlsAuthority(ca, keys.privateKey, leafKeys, leafKeyPem, pin);
  }

  /** The leaf for `host` (a name or an IP literal), minted once and cached. */
  leafFor(host: string): Promise<LeafPem> {
    const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
    let leaf = this.#leaves.get(bare);
    if (!leaf) {
      leaf = this.#mint(bare);
      this.#leaves.set(bare, leaf);
    }
    return leaf;
  }

  async #mint(host: string): Promise<LeafPem> {
    const now = Date.now();
    const ip = /^[0-9.]+$/.test(host) || host.includes(":");
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: `CN=${ip ? "omotai-proxy-ip" : host.replace(/[,=+<>#;"\\]/g, "")}`,
      issuer: this.#ca.subject,
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + LEAF_DAYS * 86_400_000),
      signingKey: this.#caKey,
      publicKey: this.#leafKeys.publicKey,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.SubjectAlternativeNameExtension([{ type: ip ? "ip" : "dns", value: host }]),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        await x509.AuthorityKeyIdentifierExtension.create(this.#ca),
      ],
    });
    return { cert: cert.toString("pem") + "\n" + this.certPem, key: this.#leafKeyPem };
  }
}

/** A positive random serial number (16 bytes, high bit clear). */
function serial(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[0] &= 0x7f;
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}
