/* NETCONF over TLS (RFC 7589) through GnuTLS, for the driver and
 * build/netconf-emu (docs/netconf.md, "TLS"): the handshake of
 * either side, with certificates both ways, within an absolute deadline;
 * then the connection goes to the relay (netconf_relay.c), which moves
 * records as it moves an SSH channel's bytes, and libnetconf2 gets its
 * socketpair as ever.
 *
 * Why not libnetconf2's own TLS client (nc_connect_tls; Debian's
 * libnetconf2 2.0 is built with it, on OpenSSL): it reads the device's
 * connection itself, so a reply would have no bound and a 300 s deadline,
 * which the relay exists to prevent. GnuTLS is the TLS library ofc
 * already uses (the gateway's).
 *
 * The client checks the device's certificate against the config's CA
 * file and the server name (tls_server_name, else the address's host: a
 * DNS name or an IP address, matched against the certificate's subject
 * alternative names), and presents the credentials file's certificate
 * and key. The server asks for a client certificate, checks it against its
 * CA, and names the session's user by its common name. No message quotes
 * a key: files are named, GnuTLS's words describe what failed.
 */
#include "drivers/internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CA_FILE_MAX (4u << 20)
#define RECORD_MAX  16384 /* what one send carries */

struct nctls {
	gnutls_session_t s;
	gnutls_certificate_credentials_t cred; /* owned, or NULL (the server's is shared) */
	int fd;
	size_t again; /* a send that said "again": its size, which the next one repeats */
	char *pre;    /* the server's first bytes, read by the client's handshake */
	size_t npre;
};

/* ---- records (the relay's side) --------------------------------------------------- */

int nctls_fd(const struct nctls *t)
{
	return t->fd;
}

long nctls_recv(struct nctls *t, char *buf, size_t n, bool *eof)
{
	if (t->npre) {
		size_t k = n < t->npre ? n : t->npre;

		memcpy(buf, t->pre, k);
		memmove(t->pre, t->pre + k, t->npre - k);
		t->npre -= k;
		return (long)k;
	}
	ssize_t k = gnutls_record_recv(t->s, buf, n);

	if (k > 0)
		return (long)k;
	if (k == 0 || k == GNUTLS_E_PREMATURE_TERMINATION) {
		*eof = true;
		return -1;
	}
	return k == GNUTLS_E_AGAIN || k == GNUTLS_E_INTERRUPTED || k == GNUTLS_E_REHANDSHAKE ? 0
											     : -1;
}

long nctls_send(struct nctls *t, const char *buf, size_t n)
{
	/* GnuTLS: after GNUTLS_E_AGAIN the same call again, same size */
	size_t want = t->again ? t->again : n < RECORD_MAX ? n : RECORD_MAX;
	ssize_t k = gnutls_record_send(t->s, buf, want);

	if (k == GNUTLS_E_AGAIN || k == GNUTLS_E_INTERRUPTED) {
		t->again = want;
		return 0;
	}
	t->again = 0;
	return k < 0 ? -1 : (long)k;
}

bool nctls_pending(struct nctls *t)
{
	return t->npre || gnutls_record_check_pending(t->s) > 0;
}

void nctls_close(struct nctls *t)
{
	if (!t)
		return;
	if (t->s) {
		gnutls_bye(t->s, GNUTLS_SHUT_WR); /* non-blocking: what goes, goes */
		gnutls_deinit(t->s);
	}
	if (t->cred)
		gnutls_certificate_free_credentials(t->cred);
	if (t->fd >= 0)
		close(t->fd);
	free(t->pre);
	free(t);
}

/* ---- the handshake ---------------------------------------------------------------- */

/* GnuTLS's handshake on a non-blocking socket until done, a fatal error or
 * the deadline (GNUTLS_E_TIMEDOUT). */
static int handshake(struct nctls *t, double deadline)
{
	for (;;) {
		int r = gnutls_handshake(t->s), ms;
		struct pollfd p = {.fd = t->fd};

		if (r == 0 || (r < 0 && r != GNUTLS_E_AGAIN && r != GNUTLS_E_INTERRUPTED &&
			       gnutls_error_is_fatal(r)))
			return r;
		ms = (int)((deadline - now_seconds()) * 1000);
		if (ms <= 0)
			return GNUTLS_E_TIMEDOUT;
		p.events = gnutls_record_get_direction(t->s) ? POLLOUT : POLLIN;
		if (poll(&p, 1, ms) < 0 && errno != EINTR)
			return GNUTLS_E_PUSH_ERROR;
	}
}

static void append(char *out, size_t n, size_t *off, const char *fmt, ...) OFC_PRINTF(4, 5);
static void append(char *out, size_t n, size_t *off, const char *fmt, ...)
{
	va_list ap;

	if (*off + 2 >= n)
		return;
	if (*off)
		*off += (size_t)snprintf(out + *off, n - *off, ", ");
	va_start(ap, fmt);
	*off += (size_t)vsnprintf(out + *off, n - *off, fmt, ap);
	va_end(ap);
	if (*off >= n)
		*off = n - 1;
}

/* Why GnuTLS refused the device's certificate, in words. */
static void status_words(unsigned st, const char *ca, const char *name, char *out, size_t n)
{
	static const struct {
		unsigned bit;
		const char *word;
	} words[] = {
	    {GNUTLS_CERT_EXPIRED, "expired"},
	    {GNUTLS_CERT_NOT_ACTIVATED, "not valid yet"},
	    {GNUTLS_CERT_REVOKED, "revoked"},
	    {GNUTLS_CERT_SIGNER_NOT_CA, "signed by a certificate that is not a CA"},
	    {GNUTLS_CERT_SIGNATURE_FAILURE, "its signature does not verify"},
	    {GNUTLS_CERT_INSECURE_ALGORITHM, "signed with an insecure algorithm"},
	    {GNUTLS_CERT_PURPOSE_MISMATCH, "not for a TLS server"},
	};
	size_t off = 0;

	out[0] = 0;
	if (st & GNUTLS_CERT_SIGNER_NOT_FOUND)
		append(out, n, &off, "not signed by a CA in %s (tls_ca)", ca);
	if (st & GNUTLS_CERT_UNEXPECTED_OWNER)
		append(out, n, &off,
		       "not issued for '%s' (tls_server_name, else the address's host)", name);
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (st & words[i].bit)
			append(out, n, &off, "%s", words[i].word);
	if (!out[0])
		snprintf(out, n, "refused by GnuTLS (status 0x%x)", st);
}

/* The server's first bytes (a NETCONF server speaks first: its hello),
 * kept for the relay. Under TLS 1.3 the server checks the client's
 * certificate after the client's part of the handshake is done, and its
 * refusal is an alert where these bytes would be: read here, it is the
 * handshake's error, not a hello that never came. */
static int first_bytes(struct nctls *t, double deadline)
{
	t->pre = xmalloc(RECORD_MAX);
	for (;;) {
		ssize_t k = gnutls_record_recv(t->s, t->pre, RECORD_MAX);
		struct pollfd p = {.fd = t->fd, .events = POLLIN};
		int ms;

		if (k > 0) {
			t->npre = (size_t)k;
			return 0;
		}
		if (k == 0)
			return GNUTLS_E_PREMATURE_TERMINATION;
		if (k != GNUTLS_E_AGAIN && k != GNUTLS_E_INTERRUPTED &&
		    gnutls_error_is_fatal((int)k))
			return (int)k;
		ms = (int)((deadline - now_seconds()) * 1000);
		if (ms <= 0)
			return GNUTLS_E_TIMEDOUT;
		if (poll(&p, 1, ms) < 0 && errno != EINTR)
			return GNUTLS_E_PULL_ERROR;
	}
}

/* The error of a client's handshake that failed with r. */
static int client_error(struct nctls *t, int r, const char *address, const char *ca,
			const char *name, struct ofc_error *err)
{
	char why[400];

	switch (r) {
	case GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR:
	case GNUTLS_E_CERTIFICATE_ERROR:
		status_words(gnutls_session_get_verify_cert_status(t->s), ca, name, why,
			     sizeof(why));
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_IDENTITY,
				      "TLS to %s: the device's certificate is %s: refusing",
				      address, why);
	case GNUTLS_E_FATAL_ALERT_RECEIVED: {
		gnutls_alert_description_t a = gnutls_alert_get(t->s);
		const char *an = gnutls_alert_get_name(a);
		bool cert = a == GNUTLS_A_BAD_CERTIFICATE || a == GNUTLS_A_UNKNOWN_CA ||
			    a == GNUTLS_A_CERTIFICATE_UNKNOWN || a == GNUTLS_A_ACCESS_DENIED ||
			    a == GNUTLS_A_UNSUPPORTED_CERTIFICATE ||
			    a == GNUTLS_A_CERTIFICATE_REVOKED ||
			    a == GNUTLS_A_CERTIFICATE_EXPIRED || a == GNUTLS_A_CERTIFICATE_REQUIRED;

		if (cert)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_AUTH,
					      "TLS to %s: the device refused ofc's certificate "
					      "(%s): check the credentials file's certificate",
					      address, an ? an : "alert");
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_AUTH,
				      "TLS to %s: the device ended the handshake (%s)", address,
				      an ? an : "alert");
	}
	case GNUTLS_E_TIMEDOUT:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TIMEOUT,
				      "TLS to %s: no handshake in time", address);
	case GNUTLS_E_PREMATURE_TERMINATION:
	case GNUTLS_E_PULL_ERROR:
	case GNUTLS_E_PUSH_ERROR:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST,
				      "TLS to %s: the connection ended in the handshake, before "
				      "the device's hello (%s)",
				      address, gnutls_strerror(r));
	default:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
				      "TLS to %s: handshake failed: %s", address,
				      gnutls_strerror(r));
	}
}

static struct nctls *new_tls(int fd)
{
	struct nctls *t = xcalloc(1, sizeof(*t));

	t->fd = fd;
	return t;
}

/* The host of "HOST:PORT" or "[V6]:PORT". */
static void address_host(const char *address, char *host, size_t n)
{
	const char *end = address[0] == '[' ? strchr(address, ']') : strrchr(address, ':');

	if (address[0] == '[')
		address++;
	snprintf(host, n, "%.*s", end ? (int)(end - address) : (int)strlen(address), address);
}

int nctls_connect(const char *address, const char *ca, const char *server_name, const char *cert,
		  size_t cert_len, const char *key, size_t key_len, double deadline,
		  struct nctls **out, struct ofc_error *err)
{
	char name[256], *ca_text = NULL;
	size_t ca_len;
	unsigned char ip[16];
	struct nctls *t;
	int fd, r;

	*out = NULL;
	if (server_name)
		snprintf(name, sizeof(name), "%s", server_name);
	else
		address_host(address, name, sizeof(name));
	if (read_file(ca, CA_FILE_MAX, &ca_text, &ca_len, err) < 0) {
		err->reason = OFC_R_CREDENTIALS;
		return -1;
	}
	fd = tcp_connect(address, deadline - now_seconds(), err);
	if (fd < 0) {
		free(ca_text);
		return -1;
	}
	t = new_tls(fd);
	gnutls_datum_t c = {(unsigned char *)ca_text, (unsigned)ca_len},
		       cd = {(unsigned char *)cert, (unsigned)cert_len},
		       kd = {(unsigned char *)key, (unsigned)key_len};
	if (gnutls_certificate_allocate_credentials(&t->cred) < 0) {
		r = ofc_error_set(err, OFC_E_RUNTIME, "gnutls: cannot make credentials");
	} else if (gnutls_certificate_set_x509_trust_mem(t->cred, &c, GNUTLS_X509_FMT_PEM) <= 0) {
		r = ofc_error_setr(err, OFC_E_INPUT, OFC_R_CREDENTIALS,
				   "tls_ca %s: no CA certificate in it (PEM)", ca);
	} else if ((r = gnutls_certificate_set_x509_key_mem2(t->cred, &cd, &kd, GNUTLS_X509_FMT_PEM,
							     NULL, 0)) < 0) {
		/* GnuTLS's words name what is wrong, never the key */
		r = ofc_error_setr(err, OFC_E_INPUT, OFC_R_CREDENTIALS,
				   "the credentials file's certificate and private key: %s",
				   gnutls_strerror(r));
	} else if (gnutls_init(&t->s, GNUTLS_CLIENT | GNUTLS_NONBLOCK) < 0 ||
		   gnutls_set_default_priority(t->s) < 0 ||
		   gnutls_credentials_set(t->s, GNUTLS_CRD_CERTIFICATE, t->cred) < 0) {
		r = ofc_error_set(err, OFC_E_RUNTIME, "gnutls: cannot make a session");
	} else {
		/* SNI carries DNS names only; the certificate is checked
		 * against the name either way */
		if (inet_pton(AF_INET, name, ip) != 1 && inet_pton(AF_INET6, name, ip) != 1)
			gnutls_server_name_set(t->s, GNUTLS_NAME_DNS, name, strlen(name));
		gnutls_session_set_verify_cert(t->s, name, 0);
		gnutls_transport_set_int(t->s, fd);
		r = handshake(t, deadline);
		if (r == 0)
			r = first_bytes(t, deadline);
		if (r < 0)
			r = client_error(t, r, address, ca, name, err);
	}
	explicit_bzero(ca_text, ca_len);
	free(ca_text);
	if (r < 0) {
		nctls_close(t);
		return -1;
	}
	*out = t;
	return 0;
}

/* ---- the server (build/netconf-emu) ------------------------------------------------ */

int nctls_server_cred(const char *cert, const char *key, const char *ca, void **out,
		      struct ofc_error *err)
{
	gnutls_certificate_credentials_t c;
	int r;

	*out = NULL;
	if (gnutls_certificate_allocate_credentials(&c) < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "gnutls: cannot make credentials");
	if ((r = gnutls_certificate_set_x509_key_file2(c, cert, key, GNUTLS_X509_FMT_PEM, NULL,
						       0)) < 0) {
		gnutls_certificate_free_credentials(c);
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s and %s: not a certificate and its key: %s", cert, key,
				     gnutls_strerror(r));
	}
	if (gnutls_certificate_set_x509_trust_file(c, ca, GNUTLS_X509_FMT_PEM) <= 0) {
		gnutls_certificate_free_credentials(c);
		return ofc_error_set(err, OFC_E_INPUT, "%s: no CA certificate in it (PEM)", ca);
	}
	*out = c;
	return 0;
}

void nctls_server_cred_free(void *cred)
{
	if (cred)
		gnutls_certificate_free_credentials(cred);
}

int nctls_accept(int fd, void *cred, double deadline, struct nctls **out, char *user, size_t n,
		 struct ofc_error *err)
{
	struct nctls *t = new_tls(fd);
	const gnutls_datum_t *certs;
	unsigned ncerts = 0;
	gnutls_x509_crt_t crt = NULL;
	size_t len = n;
	int r;

	*out = NULL;
	user[0] = 0;
	if (gnutls_init(&t->s, GNUTLS_SERVER | GNUTLS_NONBLOCK) < 0 ||
	    gnutls_set_default_priority(t->s) < 0 ||
	    gnutls_credentials_set(t->s, GNUTLS_CRD_CERTIFICATE, cred) < 0) {
		nctls_close(t);
		return ofc_error_set(err, OFC_E_RUNTIME, "gnutls: cannot make a session");
	}
	/* a client certificate the CA signed, or no session (RFC 7589 7) */
	gnutls_certificate_server_set_request(t->s, GNUTLS_CERT_REQUIRE);
	gnutls_session_set_verify_cert(t->s, NULL, 0);
	gnutls_transport_set_int(t->s, fd);
	r = handshake(t, deadline);
	if (r == 0 && (certs = gnutls_certificate_get_peers(t->s, &ncerts)) && ncerts &&
	    gnutls_x509_crt_init(&crt) == 0 &&
	    gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) == 0)
		gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, user, &len);
	if (crt)
		gnutls_x509_crt_deinit(crt);
	if (r < 0)
		gnutls_alert_send_appropriate(t->s, r); /* the client hears why */
	if (r < 0 || !user[0]) {
		ofc_error_set(err, OFC_E_RUNTIME, "TLS handshake: %s",
			      r < 0 ? gnutls_strerror(r)
				    : "no common name in the client's certificate");
		nctls_close(t);
		return -1;
	}
	*out = t;
	return 0;
}
