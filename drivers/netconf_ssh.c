/* The SSH half of a NETCONF session (RFC 6242) through libssh: connect,
 * check the device's host key against the config's known-hosts file,
 * log in with the credentials file's private key or password, and open
 * the "netconf" subsystem. The channel then goes to the relay
 * (netconf_relay.c); libnetconf2 never sees the SSH session.
 *
 * libssh is told to read no configuration of the user's (~/.ssh/config)
 * and no system-wide known hosts: only the file the config names decides
 * whom ofc trusts. Every blocking step gets what is left of the deadline
 * as libssh's timeout. The password and key never reach a message.
 */
#include "drivers/internal.h"

#include <libssh/libssh.h>
#include <math.h>
#include <string.h>

/* libssh's timeout for the next blocking step: what is left, at least 1 ms. */
static int step_timeout(ssh_session s, double deadline)
{
	double left = deadline - now_seconds();
	long sec, usec;

	if (left <= 0)
		return -1;
	sec = (long)floor(left);
	usec = (long)((left - (double)sec) * 1e6);
	if (sec == 0 && usec < 1000)
		usec = 1000;
	ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &sec);
	ssh_options_set(s, SSH_OPTIONS_TIMEOUT_USEC, &usec);
	return 0;
}

static int timed_out(const char *host, unsigned port, const char *step, struct ofc_error *err)
{
	return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TIMEOUT, "SSH to %s:%u: no %s in time",
			      host, port, step);
}

static int check_host_key(ssh_session s, const char *host, unsigned port, const char *known_hosts,
			  struct ofc_error *err)
{
	enum ssh_known_hosts_e k = ssh_session_is_known_server(s);

	switch (k) {
	case SSH_KNOWN_HOSTS_OK:
		return 0;
	case SSH_KNOWN_HOSTS_CHANGED:
	case SSH_KNOWN_HOSTS_OTHER:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_IDENTITY,
				      "the host key of %s:%u is not the one %s holds for it: "
				      "refusing to log in",
				      host, port, known_hosts);
	case SSH_KNOWN_HOSTS_UNKNOWN:
	case SSH_KNOWN_HOSTS_NOT_FOUND:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_IDENTITY,
				      "%s:%u is not in the known-hosts file %s: refusing to log "
				      "in (add its host key there, as [%s]:%u)",
				      host, port, known_hosts, host, port);
	default:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_IDENTITY,
				      "cannot check the host key of %s:%u against %s", host, port,
				      known_hosts);
	}
}

static int login(ssh_session s, const char *host, unsigned port, const struct credentials *cred,
		 const char *key_text, double deadline, struct ofc_error *err)
{
	int rc = SSH_AUTH_DENIED;

	if (key_text) {
		ssh_key key = NULL;

		if (ssh_pki_import_privkey_base64(key_text, NULL, NULL, NULL, &key) != SSH_OK)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_CREDENTIALS,
					      "the private key of the credentials file cannot be "
					      "read (an unencrypted PEM or OpenSSH key is needed)");
		if (step_timeout(s, deadline) < 0) {
			ssh_key_free(key);
			return timed_out(host, port, "login", err);
		}
		rc = ssh_userauth_publickey(s, NULL, key);
		ssh_key_free(key);
	}
	if (rc != SSH_AUTH_SUCCESS && rc != SSH_AUTH_ERROR && cred->password[0]) {
		if (step_timeout(s, deadline) < 0)
			return timed_out(host, port, "login", err);
		rc = ssh_userauth_password(s, NULL, cred->password);
	}
	if (rc == SSH_AUTH_SUCCESS)
		return 0;
	if (rc == SSH_AUTH_ERROR)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST,
				      "SSH to %s:%u: connection lost while logging in", host, port);
	/* Not even the user name: it comes from the credentials file. */
	return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_AUTH,
			      "login refused at %s:%u (SSH %s): check the credentials file", host,
			      port, key_text ? "public key and password" : "password");
}

int netconf_ssh_open(const char *host, unsigned port, const char *known_hosts,
		     const struct credentials *cred, const char *key_text, double deadline,
		     void **ssh, void **chan, struct ofc_error *err)
{
	ssh_session s = ssh_new();
	ssh_channel ch = NULL;
	int no = 0, yes = 1;

	*ssh = *chan = NULL;
	if (!s)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "cannot start libssh");
	ssh_options_set(s, SSH_OPTIONS_HOST, host);
	ssh_options_set(s, SSH_OPTIONS_PORT, &port);
	ssh_options_set(s, SSH_OPTIONS_USER, cred->user);
	ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no);
	/* An RPC is a few small writes and a reply: Nagle's algorithm against
	 * the peer's delayed ACK cost 20-40 ms a round trip (libssh leaves it
	 * on; OpenSSH turns it off for interactive sessions). */
	ssh_options_set(s, SSH_OPTIONS_NODELAY, &yes);
	ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, known_hosts);
	ssh_options_set(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, known_hosts);
	if (step_timeout(s, deadline) < 0) {
		ssh_free(s);
		return timed_out(host, port, "connection", err);
	}
	if (ssh_connect(s) != SSH_OK) {
		/* libssh's words for why: a refused port, a timeout */
		ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "cannot connect to %s:%u: %.200s",
			       host, port, ssh_get_error(s));
		ssh_free(s);
		return -1;
	}
	if (check_host_key(s, host, port, known_hosts, err) < 0 ||
	    login(s, host, port, cred, key_text, deadline, err) < 0)
		goto fail;
	if (step_timeout(s, deadline) < 0) {
		timed_out(host, port, "session", err);
		goto fail;
	}
	ch = ssh_channel_new(s);
	if (!ch || ssh_channel_open_session(ch) != SSH_OK) {
		ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "SSH to %s:%u: no session channel",
			       host, port);
		goto fail;
	}
	if (step_timeout(s, deadline) < 0) {
		timed_out(host, port, "netconf subsystem", err);
		goto fail;
	}
	if (ssh_channel_request_subsystem(ch, "netconf") != SSH_OK) {
		ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_IDENTITY,
			       "%s:%u has no SSH subsystem 'netconf': not a NETCONF server", host,
			       port);
		goto fail;
	}
	*ssh = s;
	*chan = ch;
	return 0;
fail:
	if (ch)
		ssh_channel_free(ch);
	ssh_disconnect(s);
	ssh_free(s);
	return -1;
}
