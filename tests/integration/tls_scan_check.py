#!/usr/bin/env python3
"""Check what sslscan saw of a TLS server (its --xml) against the bar ofc
holds its servers to, and print a summary of it.

    tls_scan_check.py XML            the scan made with a client certificate
    tls_scan_check.py --bare XML     the scan made without one

The bar (RFC 9325, BCP 195, section 4.2's recommended suites): no protocol
below TLS 1.2; every TLS 1.2 suite forward-secret (ECDHE or DHE) and
authenticated encryption (GCM, CCM or ChaCha20-Poly1305: CBC with HMAC is the
MAC-then-encrypt construction padding oracles such as Lucky 13 read); no
NULL, export, RC4, DES, 3DES, MD5 or anonymous suite; no MD5 or SHA-1
handshake signature (RFC 9155; sslscan --show-sigs); no cipher, key
exchange group or certificate key under 128 bits of security (RSA keys
under 2048 bits). A scan that completed no handshake fails: a scanner that
could not connect must not pass for a clean server.

--bare: the server asks for a client certificate and refuses a handshake
without one. Where TLS 1.2 is spoken the refusal is in the handshake, so no
TLS 1.2 suite may be accepted; a TLS 1.3 client finishes its handshake
before the server reads the certificate, so TLS 1.3's refusal is checked by
a request (the test's curl), not here.

Violations go to stderr, one a line, and the exit status is 1; the summary
goes to stdout either way."""
import re
import sys
import xml.etree.ElementTree as ET

OLD = {("ssl", "2"), ("ssl", "3"), ("tls", "1.0"), ("tls", "1.1")}
BAD_NAME = re.compile(r"NULL|EXP|RC4|DES|MD5|ADH|AECDH|anon|CCM_8|CCM8", re.I)
BAD_STRENGTH = {"null", "anonymous", "weak", "medium"}


def check(path, bare):
    t = ET.parse(path).find("ssltest")
    bad = []
    if t is None:
        return ["no <ssltest> in the scan (did sslscan connect?)"], []
    enabled = []
    for p in t.findall("protocol"):
        name = ("SSLv" if p.get("type") == "ssl" else "TLSv") + p.get("version")
        if p.get("enabled") == "1":
            enabled.append(name)
            if (p.get("type"), p.get("version")) in OLD:
                bad.append(f"{name} enabled")
    if "TLSv1.3" not in enabled:
        bad.append("TLSv1.3 not enabled")
    suites = {"TLSv1.2": [], "TLSv1.3": []}
    for c in t.findall("cipher"):
        v, n, bits = c.get("sslversion"), c.get("cipher"), int(c.get("bits", "0"))
        suites.setdefault(v, []).append(n)
        if v not in ("TLSv1.2", "TLSv1.3"):
            bad.append(f"{v} suite {n} accepted")
        if BAD_NAME.search(n) or c.get("strength") in BAD_STRENGTH:
            bad.append(f"weak suite {v} {n} (sslscan: {c.get('strength')})")
        if bits < 128:
            bad.append(f"{v} {n}: {bits} bits")
        if v == "TLSv1.2" and not re.match(r"(ECDHE|DHE)-", n):
            bad.append(f"TLSv1.2 {n}: no forward secrecy (static key exchange)")
        if v == "TLSv1.2" and not re.search(r"GCM|CHACHA20-POLY1305|CCM", n):
            bad.append(f"TLSv1.2 {n}: CBC and HMAC, not authenticated encryption")
    if not suites["TLSv1.3"]:
        bad.append("no TLSv1.3 suite accepted: the scan completed no handshake")
    if bare and suites["TLSv1.2"]:
        bad.append("without a client certificate TLSv1.2 handshakes completed: "
                   + ", ".join(suites["TLSv1.2"]))
    if not bare and "TLSv1.2" in enabled and not suites["TLSv1.2"]:
        bad.append("TLSv1.2 enabled but no suite accepted (was the client certificate taken?)")
    groups = {}
    for g in t.findall("group"):
        groups.setdefault(g.get("name").split(" ")[0], int(g.get("bits", "0")))
        if int(g.get("bits", "0")) < 128:
            bad.append(f"key exchange group {g.get('name')} ({g.get('sslversion')}): "
                       f"{g.get('bits')} bits")
    sigs = []
    for sig in t.findall("connection-signature-algorithm"):
        sigs.append(f"{sig.get('sslversion')[4:]}:{sig.get('name')}")
        if re.search(r"md5|sha1$|sha1_|sha224", sig.get("name"), re.I):
            bad.append(f"{sig.get('sslversion')} signature {sig.get('name')}")
    keys = []
    for pk in t.findall("certificates/certificate[@type='short']/pk"):
        kind, bits = pk.get("type"), int(pk.get("bits", "0"))
        if kind == "EC":
            keys.append(f"EC {pk.get('curve_name')} ({bits} bits of security)")
            if bits < 128:
                bad.append(f"certificate key EC {pk.get('curve_name')}: {bits} bits")
        else:
            keys.append(f"{kind} {bits} bits")
            if kind == "RSA" and bits < 2048 or kind not in ("RSA", "EC") and bits < 256:
                bad.append(f"certificate key {kind}: {bits} bits")
    summary = [
        "protocols: " + " ".join(enabled),
        "TLSv1.3: " + " ".join(suites["TLSv1.3"]),
        "TLSv1.2: " + (" ".join(suites["TLSv1.2"]) or "none"),
        "groups: " + " ".join(groups),
        "signatures: " + (" ".join(sigs) or "-"),
        "certificate: " + (", ".join(keys) or "-"),
    ]
    return bad, summary


def main():
    args = sys.argv[1:]
    if args[:1] in (["--help"], ["-h"]):
        print(__doc__)
        return
    bare = args[:1] == ["--bare"]
    if bare:
        args = args[1:]
    if len(args) != 1:
        sys.exit("usage: tls_scan_check.py [--bare] SSLSCAN.xml")
    try:
        bad, summary = check(args[0], bare)
    except (OSError, ET.ParseError) as e:
        sys.exit(f"tls_scan_check: {args[0]}: {e} (sslscan's --xml, written in full?)")
    print("\n".join(summary))
    for b in bad:
        print(b, file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
