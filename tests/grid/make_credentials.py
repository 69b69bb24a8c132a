#!/usr/bin/python3
"""Grid credentials for pxfer's tests, made once per test program in DIR (about a second).

A test CA in the grid layout (DIR/certificates: HASH.0 and its CRL HASH.r0), a host certificate
for localhost, user certificates, RFC 3820 proxies (good and bad ones), and a CA nobody trusts.
Files and what each is for:

  certificates/          the --x509-ca-dir: the test CA (hashed) and its CRL (revokes `revoked`)
  host.pem host.key      pxferd's certificate: CN=localhost, DNS:localhost, IP:127.0.0.1
  user.pem user.key      /DC=org/DC=pxfer-test/OU=Users/CN=Jane Doe (an end-entity certificate)
  proxy.pem              RFC 3820 proxy of Jane (cert, key, user cert: the X509_USER_PROXY layout)
  proxy2.pem             a proxy of that proxy
  expired-proxy.pem      Jane's proxy that expired an hour ago
  unknown-ca-proxy.pem   proxy of a user whose CA is not in certificates/
  bad-parent-proxy.pem   names Jane as issuer but was signed by Joe's key
  bad-subject-proxy.pem  Joe's proxy whose subject claims to be below Jane's DN
  revoked-proxy.pem      proxy of /DC=org/DC=pxfer-test/OU=Users/CN=Revoked User (on the CRL)
  vomsdir/testvo/*.lsc   the --voms-dir: trusts voms.pxfer-test.org for the VO testvo
  voms-proxy.pem         Vera's proxy, AC of testvo: /testvo/Role=production, /testvo/analysis
  voms-forged-proxy.pem  the same AC signed by a VOMS host of the same name from the untrusted CA
  voms-expired-proxy.pem an AC that expired 23 hours ago (in a proxy that is still valid)
  voms-wrongvo-proxy.pem an AC of othervo, which the vomsdir does not list

  issuer-keys.pem        the test issuer's public keys (EC P-256 and RSA), its --token-issuers key_file
  token-issuers.toml     https://issuer.pxfer-test.org/ with base_path /tokens, audience pxfer-test
  tok-*.jwt              WLCG tokens of that issuer (see make_tokens for each one's flaw, if any)

VOMS ACs come from voms-proxy-fake (voms-clients), which takes RSA keys only. Tokens are signed with
python3-jwt, except the forgeries it refuses to make (alg none, HS256 keyed with the public key).

Usage: make_credentials.py DIR   (needs python3-cryptography; run with /usr/bin/python3)
       make_credentials.py --jwks DIR ISSUER_URL: an issuer whose keys are served as a JWKS
         jwks.json              its keys: EC P-256 (kid k-ec) and RSA (kid k-rsa), as JWKs
         jwks-tok-ec.jwt        a good token of ISSUER_URL signed with k-ec (ES256)
         jwks-tok-rsa.jwt       a good token signed with k-rsa (RS256)
         jwks-tok-other-key.jwt claims kid k-ec but is signed by another key
         jwks-tok-new-kid.jwt   signed by a key the JWKS does not hold (kid k-new)
         jwks-tok-long-sub.jwt  a good k-ec token whose subject is 200 characters long
"""
import datetime
import os
import subprocess
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID, ExtendedKeyUsageOID

NOW = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
HOUR = datetime.timedelta(hours=1)
DAY = datetime.timedelta(days=1)
# proxyCertInfo (RFC 3820 3.8), critical: no path length, policy language id-ppl-inheritAll.
PROXY_CERT_INFO = x509.ObjectIdentifier("1.3.6.1.5.5.7.1.14")
INHERIT_ALL_DER = bytes.fromhex("300c300a06082b06010505071501")
BASE = [("DC", "org"), ("DC", "pxfer-test")]
OIDS = {"DC": NameOID.DOMAIN_COMPONENT, "OU": NameOID.ORGANIZATIONAL_UNIT_NAME, "CN": NameOID.COMMON_NAME,
        "O": NameOID.ORGANIZATION_NAME}


def name(parts):
    return x509.Name([x509.NameAttribute(OIDS[k], v) for k, v in parts])


def key(kind="ec"):
    if kind == "rsa":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return ec.generate_private_key(ec.SECP256R1())  # P-256: RSA keys cost seconds on a loaded machine


def pem(cert):
    return cert.public_bytes(serialization.Encoding.PEM)


def key_pem(k):
    return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                           serialization.NoEncryption())


def build(subject, issuer, public_key, signer, serial, start, end, extensions):
    b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
         .serial_number(serial).not_valid_before(start).not_valid_after(end))
    for ext, critical in extensions:
        b = b.add_extension(ext, critical)
    return b.sign(signer, hashes.SHA256())


def make_ca(parts, serial):
    k = key()
    n = name(parts)
    ski = x509.SubjectKeyIdentifier.from_public_key(k.public_key())
    cert = build(n, n, k.public_key(), k, serial, NOW - DAY, NOW + 30 * DAY, [
        (x509.BasicConstraints(ca=True, path_length=None), True),
        (x509.KeyUsage(False, False, False, False, False, True, True, False, False), True), (ski, False)])
    return cert, k


def make_eec(ca, ca_key, parts, serial, san=None, server=False, kind="ec"):
    k = key(kind)
    usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
    ext = [(x509.BasicConstraints(ca=False, path_length=None), True),
           (x509.KeyUsage(True, False, True, False, False, False, False, False, False), True),
           (x509.ExtendedKeyUsage([usage]), False),
           (x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False),
           (x509.SubjectKeyIdentifier.from_public_key(k.public_key()), False)]
    if san:
        ext.append((x509.SubjectAlternativeName(san), False))
    return build(name(parts), ca.subject, k.public_key(), ca_key, serial, NOW - DAY, NOW + 10 * DAY, ext), k


def make_proxy(parent, parent_key, serial, start=None, end=None, subject_parent=None, signer=None, extra=()):
    """An RFC 3820 proxy of `parent`: subject = parent's subject + CN=serial."""
    k = key()
    base = subject_parent if subject_parent is not None else parent
    subject = x509.Name(list(base.subject) + [x509.NameAttribute(NameOID.COMMON_NAME, str(serial))])
    ext = [(x509.UnrecognizedExtension(PROXY_CERT_INFO, INHERIT_ALL_DER), True),
           (x509.KeyUsage(True, False, True, False, False, False, False, False, False), True)] + list(extra)
    return build(subject, parent.subject, k.public_key(), signer or parent_key, serial, start or NOW - HOUR,
                 end or NOW + 12 * HOUR, ext), k


def write(path, data, mode=0o644):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


def write_proxy(path, proxy, proxy_key, chain):
    write(path, pem(proxy) + key_pem(proxy_key) + b"".join(pem(c) for c in chain), 0o600)


def make_crl(ca, ca_key, revoked_serials):
    b = (x509.CertificateRevocationListBuilder().issuer_name(ca.subject).last_update(NOW - HOUR)
         .next_update(NOW + 7 * DAY))
    for s in revoked_serials:
        b = b.add_revoked_certificate(x509.RevokedCertificateBuilder().serial_number(s).revocation_date(NOW - HOUR)
                                      .build())
    return b.sign(ca_key, hashes.SHA256())


def main(out):
    os.makedirs(out + "/certificates", exist_ok=True)
    ca, ca_key = make_ca(BASE + [("CN", "Test Grid CA")], 1)
    other, other_key = make_ca([("DC", "org"), ("DC", "elsewhere"), ("CN", "Untrusted CA")], 1)
    users = BASE + [("OU", "Users")]
    host, host_key = make_eec(ca, ca_key, BASE + [("OU", "Hosts"), ("CN", "localhost")], 10,
                              [x509.DNSName("localhost"), x509.IPAddress(__import__("ipaddress").ip_address("127.0.0.1"))],
                              server=True)
    jane, jane_key = make_eec(ca, ca_key, users + [("CN", "Jane Doe")], 20)
    joe, joe_key = make_eec(ca, ca_key, users + [("CN", "Joe Bloggs")], 21)
    revoked, revoked_key = make_eec(ca, ca_key, users + [("CN", "Revoked User")], 22)
    stranger, stranger_key = make_eec(other, other_key, [("DC", "org"), ("DC", "elsewhere"), ("CN", "Stranger")], 30)

    write(out + "/certificates/test-ca.pem", pem(ca))
    write(out + "/certificates/test-ca.crl.pem", make_crl(ca, ca_key, [22]).public_bytes(serialization.Encoding.PEM))
    write(out + "/other-ca.pem", pem(other))
    subprocess.run(["openssl", "rehash", out + "/certificates"], check=True, stdout=subprocess.DEVNULL)
    write(out + "/ca.pem", pem(ca))
    write(out + "/host.pem", pem(host) + pem(ca))
    write(out + "/host.key", key_pem(host_key), 0o600)
    write(out + "/user.pem", pem(jane))
    write(out + "/user.key", key_pem(jane_key), 0o600)
    write(out + "/joe.pem", pem(joe))
    write(out + "/joe.key", key_pem(joe_key), 0o600)

    p1, p1_key = make_proxy(jane, jane_key, 1001)
    write_proxy(out + "/proxy.pem", p1, p1_key, [jane])
    p2, p2_key = make_proxy(p1, p1_key, 1002)
    write_proxy(out + "/proxy2.pem", p2, p2_key, [p1, jane])
    old, old_key = make_proxy(jane, jane_key, 1003, start=NOW - 13 * HOUR, end=NOW - HOUR)
    write_proxy(out + "/expired-proxy.pem", old, old_key, [jane])
    sp, sp_key = make_proxy(stranger, stranger_key, 1004)
    write_proxy(out + "/unknown-ca-proxy.pem", sp, sp_key, [stranger])
    forged, forged_key = make_proxy(jane, jane_key, 1005, signer=joe_key)
    write_proxy(out + "/bad-parent-proxy.pem", forged, forged_key, [jane])
    claim, claim_key = make_proxy(joe, joe_key, 1006, subject_parent=jane)
    # issued and signed by Joe, but its subject claims a place below Jane's DN (RFC 3820 3.4)
    write_proxy(out + "/bad-subject-proxy.pem", claim, claim_key, [joe])
    rp, rp_key = make_proxy(revoked, revoked_key, 1007)
    write_proxy(out + "/revoked-proxy.pem", rp, rp_key, [revoked])
    make_voms(out, ca, ca_key, other, other_key)
    make_tokens(out)


ISSUER = "https://issuer.pxfer-test.org/"


def b64url(data):
    import base64
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(header, claims):
    import json
    return b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())


def make_tokens(out):
    import hashlib
    import hmac
    import jwt
    ec_key, rsa_key, stranger = key(), key("rsa"), key()
    pub = lambda k: k.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    write(out + "/issuer-keys.pem", pub(ec_key) + pub(rsa_key))
    with open(out + "/token-issuers.toml", "w") as f:
        f.write('audience = ["pxfer-test"]\n\n[[issuer]]\nurl = "%s"\nbase_path = "/tokens"\nkey_file = "%s"\n'
                % (ISSUER, out + "/issuer-keys.pem"))
    now = int(NOW.timestamp())
    base = {"iss": ISSUER, "sub": "user-1234", "aud": "pxfer-test", "iat": now - 60, "nbf": now - 60,
            "exp": now + 3600, "wlcg.ver": "1.0", "jti": "jti-good"}
    rw = "storage.read:/ storage.create:/in storage.modify:/in"

    def sign(name, changes, k=ec_key, alg="ES256"):
        claims = dict(base, **changes)
        write(out + "/tok-" + name + ".jwt", jwt.encode(claims, k, algorithm=alg).encode(), 0o600)

    sign("rw", {"scope": rw})
    sign("rs256", {"scope": "storage.read:/", "jti": "jti-rs256"}, rsa_key, "RS256")
    sign("read-only", {"scope": "storage.read:/"})
    sign("other-path", {"scope": "storage.read:/ storage.create:/elsewhere"})
    sign("stage-only", {"scope": "storage.stage:/"})
    sign("expired", {"scope": rw, "iat": now - 7200, "nbf": now - 7200, "exp": now - 3600})
    sign("not-yet-valid", {"scope": rw, "nbf": now + 3600, "exp": now + 7200})
    sign("wrong-audience", {"scope": rw, "aud": "https://somewhere.else"})
    sign("any-audience", {"scope": rw, "aud": "https://wlcg.cern.ch/jwt/v1/any"})
    sign("unknown-issuer", {"scope": rw, "iss": "https://evil.example.org/"})
    sign("bad-signature", {"scope": rw}, stranger)
    claims = dict(base, scope=rw)
    write(out + "/tok-alg-none.jwt", (unsigned({"alg": "none", "typ": "JWT"}, claims) + ".").encode(), 0o600)
    body = unsigned({"alg": "HS256", "typ": "JWT"}, claims)
    mac = hmac.new(pub(ec_key), body.encode(), hashlib.sha256).digest()
    write(out + "/tok-hs256-public-key.jwt", (body + "." + b64url(mac)).encode(), 0o600)


VOMS_AC = x509.ObjectIdentifier("1.3.6.1.4.1.8005.100.100.5")


def voms_fake(out, user, host, vo, fqans, extra=(), vera=None):
    cmd = ["voms-proxy-fake", "-q", "-rfc", "-bits", "1024", "-cert", out + "/vera.pem", "-key", out + "/vera.key",
           "-certdir", out + "/certificates", "-hostcert", out + "/" + host + ".pem", "-hostkey",
           out + "/" + host + ".key", "-voms", vo, "-uri", "voms.pxfer-test.org:15000", "-out", out + "/" + user]
    for f in fqans:
        cmd += ["-fqan", f]
    env = dict(os.environ, RANDFILE=out + "/.rnd", X509_CERT_DIR=out + "/certificates")
    subprocess.run(cmd + list(extra), check=True, env=env, stdout=subprocess.DEVNULL)
    # voms-proxy-fake signs its proxy with SHA-1, which OpenSSL 3 refuses to use ("ca md too
    # weak"): keep its AC (it names Vera's certificate, not the proxy) in a SHA-256 proxy of ours.
    with open(out + "/" + user, "rb") as f:
        fake = x509.load_pem_x509_certificate(f.read())
    ac = fake.extensions.get_extension_for_oid(VOMS_AC)
    cert, k = vera
    proxy, proxy_key = make_proxy(cert, k, fake.serial_number, extra=[(ac.value, ac.critical)])
    write_proxy(out + "/" + user, proxy, proxy_key, [cert])


def make_voms(out, ca, ca_key, other, other_key):
    services = BASE + [("OU", "Services"), ("CN", "voms.pxfer-test.org")]
    voms, voms_key = make_eec(ca, ca_key, services, 40, kind="rsa")
    rogue, rogue_key = make_eec(other, other_key, services, 41, kind="rsa")
    vera, vera_key = make_eec(ca, ca_key, BASE + [("OU", "Users"), ("CN", "Vera Voms")], 42, kind="rsa")
    for stem, cert, k in (("voms", voms, voms_key), ("rogue-voms", rogue, rogue_key), ("vera", vera, vera_key)):
        write(out + "/" + stem + ".pem", pem(cert))
        write(out + "/" + stem + ".key", key_pem(k), 0o600)
    open(out + "/.rnd", "wb").close()
    os.makedirs(out + "/vomsdir/testvo", exist_ok=True)
    with open(out + "/vomsdir/testvo/voms.pxfer-test.org.lsc", "w") as f:
        f.write("/DC=org/DC=pxfer-test/OU=Services/CN=voms.pxfer-test.org\n/DC=org/DC=pxfer-test/CN=Test Grid CA\n")
    roles = ["/testvo/Role=production", "/testvo/analysis"]
    v = (vera, vera_key)
    voms_fake(out, "voms-proxy.pem", "voms", "testvo", roles, vera=v)
    voms_fake(out, "voms-forged-proxy.pem", "rogue-voms", "testvo", roles, vera=v)
    voms_fake(out, "voms-expired-proxy.pem", "voms", "testvo", roles, ["-pastac", "24:00", "-vomslife", "1"], vera=v)
    voms_fake(out, "voms-wrongvo-proxy.pem", "voms", "othervo", ["/othervo"], vera=v)


def make_jwks(out, issuer):
    import json
    import jwt
    from jwt.algorithms import ECAlgorithm, RSAAlgorithm
    ec_key, rsa_key, other = key(), key("rsa"), key()
    jwks = []
    for k, kid, algo in ((ec_key, "k-ec", ECAlgorithm), (rsa_key, "k-rsa", RSAAlgorithm)):
        jwk = json.loads(algo.to_jwk(k.public_key()))
        jwk.update(kid=kid, use="sig")
        jwks.append(jwk)
    with open(out + "/jwks.json", "w") as f:
        json.dump({"keys": jwks}, f)
    now = int(NOW.timestamp())
    claims = {"iss": issuer, "sub": "jwks-user", "aud": "pxfer-test", "iat": now - 60, "nbf": now - 60,
              "exp": now + 3600, "wlcg.ver": "1.0", "jti": "jti-jwks", "scope": "storage.read:/ storage.create:/in"}
    for name, k, alg, kid in (("ec", ec_key, "ES256", "k-ec"), ("rsa", rsa_key, "RS256", "k-rsa"),
                              ("other-key", other, "ES256", "k-ec"), ("new-kid", other, "ES256", "k-new")):
        token = jwt.encode(claims, k, algorithm=alg, headers={"kid": kid})
        write(out + "/jwks-tok-" + name + ".jwt", token.encode(), 0o600)
    long_sub = dict(claims, sub="a-subject-of-two-hundred-characters-" + "x" * 164)
    write(out + "/jwks-tok-long-sub.jwt", jwt.encode(long_sub, ec_key, algorithm="ES256", headers={"kid": "k-ec"}).encode(),
          0o600)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--jwks":
        make_jwks(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 2:
        main(sys.argv[1])
    else:
        sys.exit("usage: make_credentials.py DIR | --jwks DIR ISSUER_URL")
