/* Client certificates: GnuTLS's trust list holds the CA and
 * the CRL, and verifies a peer's chain (signature, validity period,
 * revocation, purpose) in the handshake, before any HTTP byte is read.
 *
 * GnuTLS adds only the CRLs it can verify and skips the rest without an
 * error ("0 added"): a CRL gone stale, one another CA signed, or a file
 * with no CRL in it would switch revocation off without a word. So each
 * CRL is checked here first and refused with the file's name and why, and
 * a CRL's nextUpdate is checked at every handshake: past it, the list no
 * longer says who is revoked, and every certificate is refused (as
 * OpenSSL's CRL check does) until a fresh CRL is loaded. */
#include "controller/gateway/internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PEM_MAX	      (4u << 20)
#define STALE_LOG_GAP 60 /* s between two lines about a stale CRL */

struct gw_trust {
	gnutls_x509_trust_list_t tl;
	const char *crl;	 /* its file (the options' string); NULL: none */
	int64_t crl_next_update; /* unix s, the earliest of its CRLs' */
	/* A stale CRL refuses every handshake: one line a minute says so,
	 * with the count of those not logged. */
	_Atomic int64_t stale_logged_at;
	atomic_ullong stale_unlogged;
};

static void utc(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* One CRL of the file (the i-th of n) against the CA's certificates: 0, or
 * -1 with the file named and why it is refused. */
static int crl_check(const char *path, gnutls_x509_crl_t crl, unsigned i, unsigned n,
		     const gnutls_x509_crt_t *cas, unsigned ncas, int64_t now,
		     struct ofc_error *err)
{
	char which[48] = "", issuer[256], when[32];
	size_t ilen = sizeof(issuer);
	unsigned st = 0;
	time_t next = gnutls_x509_crl_get_next_update(crl);
	time_t this = gnutls_x509_crl_get_this_update(crl);

	if (n > 1)
		snprintf(which, sizeof(which), "its CRL %u of %u: ", i + 1, n);
	if (gnutls_x509_crl_get_issuer_dn(crl, issuer, &ilen) < 0)
		snprintf(issuer, sizeof(issuer), "(no issuer)");
	/* (its times are checked below, to say which) */
	if (gnutls_x509_crl_verify(crl, cas, ncas, 0, &st) < 0)
		st |= GNUTLS_CERT_INVALID;
	st &= ~(unsigned)(GNUTLS_CERT_REVOCATION_DATA_SUPERSEDED |
			  GNUTLS_CERT_REVOCATION_DATA_ISSUED_IN_FUTURE);
	if (st == GNUTLS_CERT_INVALID) /* (set with any other bit) */
		st = 0;
	if (st & GNUTLS_CERT_SIGNER_NOT_FOUND)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s: %snot signed by the configured CA (its issuer is %s): a "
				     "CRL another CA signed revokes nothing here",
				     path, which, issuer);
	if (st & GNUTLS_CERT_SIGNATURE_FAILURE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s: %sits signature does not verify with the key of the "
				     "configured CA %s",
				     path, which, issuer);
	if (st & GNUTLS_CERT_SIGNER_NOT_CA)
		return ofc_error_set(err, OFC_E_INPUT, "%s: %sits signer %s is not a CA", path,
				     which, issuer);
	if (st & GNUTLS_CERT_INSECURE_ALGORITHM)
		return ofc_error_set(err, OFC_E_INPUT, "%s: %ssigned with an insecure algorithm",
				     path, which);
	if (st)
		return ofc_error_set(err, OFC_E_INPUT, "%s: %sdoes not verify (status 0x%x)", path,
				     which, st);
	if (next == (time_t)-1)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s: %sit has no nextUpdate, so it can never be known stale "
				     "(RFC 5280 5.1.2.5: a CA sets one)",
				     path, which);
	if ((int64_t)next < now) {
		utc(next, when, sizeof(when));
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s: %sstale: its nextUpdate, %s, has passed (issue a fresh "
				     "one: openssl ca -gencrl)",
				     path, which, when);
	}
	if (this != (time_t)-1 && (int64_t)this > now) {
		utc(this, when, sizeof(when));
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s: %sissued in the future (thisUpdate %s): check the clocks",
				     path, which, when);
	}
	return 0;
}

/* The CRLs of `path` checked against the CAs in ca_text (the file ca),
 * then added to tl, which owns them from then on; *next: the earliest
 * nextUpdate. */
static int crl_load(gnutls_x509_trust_list_t tl, const char *path, const char *ca,
		    const gnutls_datum_t *ca_text, int64_t *next, struct ofc_error *err)
{
	gnutls_x509_crt_t *cas = NULL;
	gnutls_x509_crl_t *crls = NULL;
	unsigned ncas = 0, n = 0, i;
	int64_t now = (int64_t)time(NULL);
	char *text = NULL;
	size_t len;
	int rc = -1, added;

	if (read_file(path, PEM_MAX, &text, &len, err) < 0)
		return -1;
	gnutls_datum_t d = {(unsigned char *)text, (unsigned)len};
	added = gnutls_x509_crl_list_import2(&crls, &n, &d, GNUTLS_X509_FMT_PEM, 0);
	bool pem = strstr(text, "-----BEGIN X509 CRL-----") != NULL;
	free(text);
	if (added < 0 || n == 0) {
		if (pem)
			ofc_error_set(err, OFC_E_INPUT, "%s: a CRL that does not parse: %s", path,
				      added < 0 ? gnutls_strerror(added) : "none found");
		else
			ofc_error_set(err, OFC_E_INPUT,
				      "%s: no CRL in it (PEM, -----BEGIN X509 CRL-----)", path);
		return -1;
	}
	if (gnutls_x509_crt_list_import2(&cas, &ncas, ca_text, GNUTLS_X509_FMT_PEM, 0) < 0) {
		ofc_error_set(err, OFC_E_INPUT, "%s: does not parse (PEM)", ca);
		goto out;
	}
	*next = INT64_MAX;
	for (i = 0; i < n; i++) {
		if (crl_check(path, crls[i], i, n, cas, ncas, now, err) < 0)
			goto out;
		if ((int64_t)gnutls_x509_crl_get_next_update(crls[i]) < *next)
			*next = (int64_t)gnutls_x509_crl_get_next_update(crls[i]);
	}
	/* GnuTLS verifies them again (GNUTLS_TL_VERIFY_CRL) and must take
	 * every one: a CRL it skips would be a CRL not in effect. */
	added = gnutls_x509_trust_list_add_crls(tl, crls, n, GNUTLS_TL_VERIFY_CRL, 0);
	if (added != (int)n) {
		ofc_error_set(err, OFC_E_INPUT, "%s: GnuTLS took %d of its CRLs, not all %u", path,
			      added, n);
		/* (those it took are the list's, the rest leak: a case the
		 * checks above leave only to a GnuTLS that disagrees) */
		n = 0;
		goto out;
	}
	n = 0; /* the list's now */
	rc = 0;
out:
	for (i = 0; i < n; i++)
		gnutls_x509_crl_deinit(crls[i]);
	gnutls_free(crls);
	for (i = 0; i < ncas; i++)
		gnutls_x509_crt_deinit(cas[i]);
	gnutls_free(cas);
	return rc;
}

int gw_trust_load(const char *ca, const char *crl, struct gw_trust **out, struct ofc_error *err)
{
	struct gw_trust *t = xcalloc(1, sizeof(*t));
	char *text = NULL;
	size_t len;
	int rc;

	*out = NULL;
	if (gnutls_x509_trust_list_init(&t->tl, 0) < 0) {
		free(t);
		return ofc_error_set(err, OFC_E_RUNTIME, "gnutls: cannot make a trust list");
	}
	if (read_file(ca, PEM_MAX, &text, &len, err) < 0)
		goto fail;
	gnutls_datum_t d = {(unsigned char *)text, (unsigned)len};
	rc = gnutls_x509_trust_list_add_trust_mem(t->tl, &d, NULL, GNUTLS_X509_FMT_PEM, 0, 0);
	if (rc <= 0) {
		ofc_error_set(err, OFC_E_INPUT, "%s: no CA certificate in it (PEM)%s%s", ca,
			      rc < 0 ? ": " : "", rc < 0 ? gnutls_strerror(rc) : "");
		goto fail;
	}
	if (crl && crl_load(t->tl, crl, ca, &d, &t->crl_next_update, err) < 0)
		goto fail;
	free(text);
	t->crl = crl;
	atomic_init(&t->stale_logged_at, 0);
	atomic_init(&t->stale_unlogged, 0);
	*out = t;
	return 0;
fail:
	free(text);
	gw_trust_free(t);
	return -1;
}

void gw_trust_free(struct gw_trust *t)
{
	if (!t)
		return;
	gnutls_x509_trust_list_deinit(t->tl, 1);
	free(t);
}

int gw_load_trust_policy(const struct gw_opts *o, struct gw_trust **t, struct gw_policy **pol,
			 struct ofc_error *err)
{
	if (gw_trust_load(o->ca, o->crl, t, err) < 0)
		return -1;
	if (gw_policy_load(o->policy, pol, err) < 0) {
		gw_trust_free(*t);
		*t = NULL;
		return -1;
	}
	return 0;
}

int64_t gw_trust_crl_next_update(const struct gw_trust *t)
{
	return t && t->crl ? t->crl_next_update : 0;
}

char *gw_trust_metrics(const struct gw_trust *t)
{
	if (!t->crl)
		return xasprintf("%s", "");
	return xasprintf(
	    "# HELP ofc_gateway_crl_next_update_timestamp_seconds When the loaded CRL's "
	    "nextUpdate passes (unix time; the earliest of its CRLs): from then on every client "
	    "certificate is refused until a fresh CRL is loaded (SIGHUP).\n"
	    "# TYPE ofc_gateway_crl_next_update_timestamp_seconds gauge\n"
	    "ofc_gateway_crl_next_update_timestamp_seconds %lld\n",
	    (long long)t->crl_next_update);
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

/* Past the CRL's nextUpdate: -1 with why for the line to log, or -2 when
 * such a line went out less than STALE_LOG_GAP ago (counted, for the next
 * line to say how many were refused meanwhile). */
static int stale_refusal(struct gw_trust *t, int64_t now, char *why, size_t ylen)
{
	int64_t last = atomic_load(&t->stale_logged_at);
	char when[32], more[64] = "";

	if (now - last < STALE_LOG_GAP ||
	    !atomic_compare_exchange_strong(&t->stale_logged_at, &last, now)) {
		atomic_fetch_add(&t->stale_unlogged, 1);
		return -2;
	}
	unsigned long long n = atomic_exchange(&t->stale_unlogged, 0);
	if (n)
		snprintf(more, sizeof(more), " (and %llu more since the last such line)", n);
	utc(t->crl_next_update, when, sizeof(when));
	snprintf(why, ylen,
		 "the CRL %s is stale (its nextUpdate, %s, has passed): every client "
		 "certificate is refused until a fresh CRL is loaded (SIGHUP)%s",
		 t->crl, when, more);
	return -1;
}

int gw_peer_verify(gnutls_session_t s, struct gw_trust *t, char *who, size_t wlen, char *why,
		   size_t ylen)
{
	/* A client's certificate must be made for it: one whose extended
	 * key usage lacks clientAuth (a server's, serverAuth only) is
	 * GNUTLS_CERT_PURPOSE_MISMATCH. One with no extended key usage may
	 * serve any purpose (RFC 5280 4.2.1.12). */
	gnutls_typed_vdata_st purpose = {.type = GNUTLS_DT_KEY_PURPOSE_OID,
					 .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT};
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
	int64_t now = (int64_t)time(NULL);
	if (gnutls_x509_trust_list_verify_crt2(t->tl, crts, k, &purpose, 1,
					       GNUTLS_VERIFY_DISABLE_TRUSTED_TIME_CHECKS, &st,
					       NULL) < 0)
		snprintf(why, ylen, "cannot be verified");
	else if (st)
		status_words(st, why, ylen);
	else if (t->crl && now > t->crl_next_update)
		rc = stale_refusal(t, now, why, ylen);
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
