/* build/netconf-emu's SSH server (RFC 6242) through libssh: the host key,
 * who may log in (the --credentials file's user, with its password or the
 * public half of its private key; anyone without --credentials), and the
 * "netconf" subsystem. Each connection's handshake runs in a thread of its
 * own; the channel then goes to a relay (drivers/netconf_relay.c), as in
 * the driver, so the emulator can cut, mute or feed it. Logins and keys
 * never reach the log.
 */
#include "drivers/emu/internal.h"

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/server.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HANDSHAKE_SECONDS 10

int nemu_ssh_keys(struct nemu *e, const char *host_key_path, const char *cred_path,
		  struct ofc_error *err)
{
	ssh_key key = NULL;

	if (host_key_path && access(host_key_path, F_OK) == 0) {
		if (ssh_pki_import_privkey_file(host_key_path, NULL, NULL, NULL, &key) != SSH_OK)
			return ofc_error_set(err, OFC_E_INPUT, "%s: not a private key",
					     host_key_path);
	} else {
		if (ssh_pki_generate(SSH_KEYTYPE_ED25519, 0, &key) != SSH_OK)
			return ofc_error_set(err, OFC_E_RUNTIME, "cannot make a host key");
		if (host_key_path &&
		    ssh_pki_export_privkey_file(key, NULL, NULL, NULL, host_key_path) != SSH_OK) {
			ssh_key_free(key);
			return ofc_error_set(err, OFC_E_RUNTIME, "cannot write the host key to %s",
					     host_key_path);
		}
	}
	e->host_key = key;
	if (e->have_cred && e->cred.key_file[0]) {
		char *text = NULL;
		size_t len = 0;
		ssh_key priv = NULL, pub = NULL;
		int rc = credentials_load_key(cred_path, NULL, &e->cred, &text, &len, err);

		if (rc == 0 &&
		    (ssh_pki_import_privkey_base64(text, NULL, NULL, NULL, &priv) != SSH_OK ||
		     ssh_pki_export_privkey_to_pubkey(priv, &pub) != SSH_OK))
			rc = ofc_error_set(err, OFC_E_INPUT, "the private key of %s cannot be read",
					   cred_path);
		if (text) {
			explicit_bzero(text, len);
			free(text);
		}
		ssh_key_free(priv);
		if (rc < 0)
			return -1;
		e->auth_key = pub;
	}
	return 0;
}

int nemu_known_hosts_line(const struct nemu *e, const char *host, unsigned port, char *buf,
			  size_t n, struct ofc_error *err)
{
	ssh_key pub = NULL;
	char *b64 = NULL;

	if (ssh_pki_export_privkey_to_pubkey(e->host_key, &pub) != SSH_OK ||
	    ssh_pki_export_pubkey_base64(pub, &b64) != SSH_OK) {
		ssh_key_free(pub);
		return ofc_error_set(err, OFC_E_RUNTIME, "cannot export the host key");
	}
	snprintf(buf, n, "[%s]:%u %s %s\n", host, port, ssh_key_type_to_char(ssh_key_type(pub)),
		 b64);
	ssh_string_free_char(b64);
	ssh_key_free(pub);
	return 0;
}

/* ---- one connection ----------------------------------------------------------------- */

struct conn {
	struct nemu *e;
	int fd, ready_fd;
	bool authed, subsystem;
	ssh_channel chan;
	char user[64];
	struct ssh_channel_callbacks_struct ccb;
};

static int auth_password(ssh_session s, const char *user, const char *pw, void *ud)
{
	struct conn *c = ud;
	const struct nemu *e = c->e;

	(void)s;
	if (!e->have_cred || (e->cred.password[0] && strcmp(user, e->cred.user) == 0 &&
			      strcmp(pw, e->cred.password) == 0)) {
		c->authed = true;
		snprintf(c->user, sizeof(c->user), "%s", user);
		return SSH_AUTH_SUCCESS;
	}
	return SSH_AUTH_DENIED;
}

static int auth_pubkey(ssh_session s, const char *user, struct ssh_key_struct *pubkey,
		       char signature_state, void *ud)
{
	struct conn *c = ud;
	const struct nemu *e = c->e;

	(void)s;
	if (e->have_cred && (!e->auth_key || strcmp(user, e->cred.user) != 0 ||
			     ssh_key_cmp(pubkey, e->auth_key, SSH_KEY_CMP_PUBLIC) != 0))
		return SSH_AUTH_DENIED;
	if (signature_state == SSH_PUBLICKEY_STATE_NONE)
		return SSH_AUTH_SUCCESS; /* the key would do: now prove it */
	if (signature_state != SSH_PUBLICKEY_STATE_VALID)
		return SSH_AUTH_DENIED;
	c->authed = true;
	snprintf(c->user, sizeof(c->user), "%s", user);
	return SSH_AUTH_SUCCESS;
}

static int subsystem(ssh_session s, ssh_channel ch, const char *name, void *ud)
{
	struct conn *c = ud;

	(void)s;
	(void)ch;
	if (strcmp(name, "netconf") != 0)
		return SSH_ERROR;
	c->subsystem = true;
	return SSH_OK;
}

static ssh_channel channel_open(ssh_session s, void *ud)
{
	struct conn *c = ud;

	if (!c->authed || c->chan)
		return NULL;
	c->chan = ssh_channel_new(s);
	if (!c->chan)
		return NULL;
	memset(&c->ccb, 0, sizeof(c->ccb));
	c->ccb.userdata = c;
	c->ccb.channel_subsystem_request_function = subsystem;
	ssh_callbacks_init(&c->ccb);
	ssh_set_channel_callbacks(c->chan, &c->ccb);
	return c->chan;
}

static ssh_bind make_bind(const struct nemu *e)
{
	ssh_bind b = ssh_bind_new();
	ssh_key key = NULL;
	char *b64 = NULL;
	bool no = false;

	if (!b)
		return NULL;
	/* a key of its own: the bind frees what it is given */
	if (ssh_pki_export_privkey_base64(e->host_key, NULL, NULL, NULL, &b64) != SSH_OK ||
	    ssh_pki_import_privkey_base64(b64, NULL, NULL, NULL, &key) != SSH_OK) {
		free(b64);
		ssh_bind_free(b);
		return NULL;
	}
	explicit_bzero(b64, strlen(b64));
	free(b64);
	ssh_bind_options_set(b, SSH_BIND_OPTIONS_PROCESS_CONFIG, &no);
	ssh_bind_options_set(b, SSH_BIND_OPTIONS_IMPORT_KEY, key);
	return b;
}

static void *handshake(void *arg)
{
	struct conn *c = arg;
	ssh_bind b = make_bind(c->e);
	ssh_session s = ssh_new();
	ssh_event ev = NULL;
	struct ssh_server_callbacks_struct cb = {
	    .userdata = c,
	    .auth_password_function = auth_password,
	    .auth_pubkey_function = auth_pubkey,
	    .channel_open_request_session_function = channel_open,
	};
	double deadline = now_seconds() + HANDSHAKE_SECONDS;
	long secs = HANDSHAKE_SECONDS;

	int one = 1;

	/* small replies: no Nagle (as the driver's side, netconf_ssh.c) */
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (!b || !s || ssh_bind_accept_fd(b, s, c->fd) != SSH_OK)
		goto fail;
	c->fd = -1; /* the session has it */
	ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &secs);
	ssh_callbacks_init(&cb);
	ssh_set_server_callbacks(s, &cb);
	if (ssh_handle_key_exchange(s) != SSH_OK)
		goto fail;
	ssh_set_auth_methods(s, SSH_AUTH_METHOD_PASSWORD | SSH_AUTH_METHOD_PUBLICKEY);
	ev = ssh_event_new();
	if (!ev || ssh_event_add_session(ev, s) != SSH_OK)
		goto fail;
	while (!(c->authed && c->chan && c->subsystem) && now_seconds() < deadline)
		if (ssh_event_dopoll(ev, 100) == SSH_ERROR)
			goto fail;
	ssh_event_remove_session(ev, s);
	ssh_event_free(ev);
	ev = NULL;
	if (!(c->authed && c->chan && c->subsystem))
		goto fail;
	ssh_remove_channel_callbacks(c->chan, &c->ccb);
	ssh_bind_free(b);
	b = NULL;
	{
		struct nemu_client *cl = xcalloc(1, sizeof(*cl));
		struct ofc_error err = {0};

		snprintf(cl->user, sizeof(cl->user), "%s", c->user);
		cl->relay = ncrelay_start(-1, s, c->chan, &cl->lib_fd, &err);
		if (!cl->relay) {
			free(cl);
			goto out; /* the relay's failure freed the session */
		}
		if (write(c->ready_fd, &cl, sizeof(cl)) != (ssize_t)sizeof(cl)) {
			close(cl->lib_fd);
			ncrelay_stop(cl->relay);
			free(cl);
		}
	}
	goto out;
fail:
	if (ev)
		ssh_event_free(ev);
	if (s) {
		ssh_disconnect(s);
		ssh_free(s);
	}
	if (b)
		ssh_bind_free(b);
out:
	if (c->fd >= 0)
		close(c->fd);
	free(c);
	return NULL;
}

void nemu_ssh_accept(struct nemu *e, int fd, int ready_fd)
{
	struct conn *c = xcalloc(1, sizeof(*c));
	pthread_t t;
	pthread_attr_t a;

	c->e = e;
	c->fd = fd;
	c->ready_fd = ready_fd;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, handshake, c) != 0) {
		close(fd);
		free(c);
	}
	pthread_attr_destroy(&a);
}
