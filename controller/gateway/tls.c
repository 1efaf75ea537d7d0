/* Client certificates (issue 36): GnuTLS's trust list holds the CA and
 * the CRL, and verifies a peer's chain (signature, validity period,
 * revocation) in the handshake, before any HTTP byte is read. */
#include "controller/gateway/internal.h"

#include <stdlib.h>
#include <string.h>

#define PEM_MAX (4u << 20)

int gw_trust_load(const char *ca, const char *crl, gnutls_x509_trust_list_t *out,
		  struct ofc_error *err)
{
	gnutls_x509_trust_list_t tl;
	char *text = NULL;
	size_t len;
	int rc;

	*out = NULL;
	if (gnutls_x509_trust_list_init(&tl, 0) < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "gnutls: cannot make a trust list");
	if (read_file(ca, PEM_MAX, &text, &len, err) < 0)
		goto fail;
	gnutls_datum_t d = {(unsigned char *)text, (unsigned)len};
	rc = gnutls_x509_trust_list_add_trust_mem(tl, &d, NULL, GNUTLS_X509_FMT_PEM, 0, 0);
	free(text);
	text = NULL;
	if (rc <= 0) {
		ofc_error_set(err, OFC_E_INPUT, "%s: no CA certificate in it (PEM)%s%s", ca,
			      rc < 0 ? ": " : "", rc < 0 ? gnutls_strerror(rc) : "");
		goto fail;
	}
	if (crl) {
		if (read_file(crl, PEM_MAX, &text, &len, err) < 0)
			goto fail;
		gnutls_datum_t c = {(unsigned char *)text, (unsigned)len};
		/* The CRL must be the CA's own (GNUTLS_TL_VERIFY_CRL): a list
		 * nobody signed revokes nothing. */
		rc = gnutls_x509_trust_list_add_trust_mem(tl, NULL, &c, GNUTLS_X509_FMT_PEM,
							  GNUTLS_TL_VERIFY_CRL, 0);
		free(text);
		if (rc < 0) {
			ofc_error_set(err, OFC_E_INPUT, "%s: not a CRL the CA signed (PEM): %s",
				      crl, gnutls_strerror(rc));
			goto fail;
		}
	}
	*out = tl;
	return 0;
fail:
	gnutls_x509_trust_list_deinit(tl, 1);
	return -1;
}

static void status_words(unsigned st, char *why, size_t len)
{
	static const struct {
		unsigned bit;
		const char *word;
	} words[] = {
	    {GNUTLS_CERT_REVOKED, "revoked (on the CA's CRL)"},
	    {GNUTLS_CERT_EXPIRED, "expired"},
	    {GNUTLS_CERT_NOT_ACTIVATED, "not valid yet"},
	    {GNUTLS_CERT_SIGNER_NOT_FOUND, "not signed by the configured CA"},
	    {GNUTLS_CERT_SIGNER_NOT_CA, "signed by a certificate that is not a CA"},
	    {GNUTLS_CERT_SIGNATURE_FAILURE, "its signature does not verify"},
	    {GNUTLS_CERT_INSECURE_ALGORITHM, "signed with an insecure algorithm"},
	    {GNUTLS_CERT_PURPOSE_MISMATCH, "not for client authentication"},
	};
	size_t off = 0;

	why[0] = 0;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if ((st & words[i].bit) && off + 2 < len)
			off += (size_t)snprintf(why + off, len - off, "%s%s", off ? ", " : "",
						words[i].word);
	if (!why[0])
		snprintf(why, len, "does not verify (status 0x%x)", st);
}

int gw_peer_verify(gnutls_session_t s, gnutls_x509_trust_list_t tl, char *who, size_t wlen,
		   char *why, size_t ylen)
{
	unsigned n = 0, st = 0;
	const gnutls_datum_t *raw = gnutls_certificate_get_peers(s, &n);
	gnutls_x509_crt_t crts[8];
	unsigned k = 0;
	int rc = -1;

	snprintf(who, wlen, "(no certificate)");
	if (!raw || !n) {
		snprintf(why, ylen, "no client certificate");
		return -1;
	}
	if (n > 8)
		n = 8;
	for (; k < n; k++) {
		if (gnutls_x509_crt_init(&crts[k]) < 0)
			break;
		if (gnutls_x509_crt_import(crts[k], &raw[k], GNUTLS_X509_FMT_DER) < 0) {
			gnutls_x509_crt_deinit(crts[k]);
			break;
		}
	}
	if (k == 0) {
		snprintf(why, ylen, "a client certificate that does not parse");
		return -1;
	}
	size_t dl = wlen;
	if (gnutls_x509_crt_get_dn(crts[0], who, &dl) < 0)
		snprintf(who, wlen, "(no subject)");
	if (gnutls_x509_trust_list_verify_crt2(
		tl, crts, k, NULL, 0, GNUTLS_VERIFY_DISABLE_TRUSTED_TIME_CHECKS, &st, NULL) < 0)
		snprintf(why, ylen, "cannot be verified");
	else if (st)
		status_words(st, why, ylen);
	else
		rc = 0;
	for (unsigned i = 0; i < k; i++)
		gnutls_x509_crt_deinit(crts[i]);
	return rc;
}

static char *name_of(const char *prefix, const char *v, size_t n)
{
	/* A name with a control byte or a space never matches a policy line
	 * (which has none) and must not reach a log line as it is. */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] <= ' ' || (unsigned char)v[i] == 0x7f)
			return NULL;
	return xasprintf("%s%.*s", prefix, (int)n, v);
}

uint32_t gw_peer_names(gnutls_session_t s, char **names)
{
	unsigned n = 0;
	const gnutls_datum_t *raw = gnutls_certificate_get_peers(s, &n);
	gnutls_x509_crt_t crt;
	uint32_t k = 0;
	char buf[512];
	size_t len;

	if (!raw || !n || gnutls_x509_crt_init(&crt) < 0)
		return 0;
	if (gnutls_x509_crt_import(crt, &raw[0], GNUTLS_X509_FMT_DER) < 0) {
		gnutls_x509_crt_deinit(crt);
		return 0;
	}
	len = sizeof(buf);
	if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, buf, &len) == 0 &&
	    (names[k] = name_of("cn:", buf, len)))
		k++;
	for (unsigned i = 0; k < GW_MAX_NAMES; i++) {
		unsigned crit = 0;
		int t;

		len = sizeof(buf);
		t = gnutls_x509_crt_get_subject_alt_name(crt, i, buf, &len, &crit);
		if (t == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
			break;
		if (t < 0)
			continue;
		const char *pre = t == GNUTLS_SAN_DNSNAME      ? "dns:"
				  : t == GNUTLS_SAN_URI	       ? "uri:"
				  : t == GNUTLS_SAN_RFC822NAME ? "email:"
							       : NULL;
		if (pre && (names[k] = name_of(pre, buf, len)))
			k++;
	}
	gnutls_x509_crt_deinit(crt);
	return k;
}
