/* The TL1 session every TL1 dialect shares (docs/tl1.md): command parsing
 * for the emulator, reply framing, login, commands with ctags, deadlines
 * and retries. The dialects (tl1_polatis.c, tl1_calient.c) build their
 * commands on tl1_command; tl1_driver.c picks one per device.
 *
 * Every command carries a fresh ctag and waits for the reply with that
 * ctag. A lost connection, a timeout or a reply that is not TL1 closes the
 * session; the command is retried on a new session (connect, ACT-USER) up
 * to `retries` times. A retried command may already have taken effect, so
 * the retries are idempotent: ENT-PATCH of a pair that exists is COMPLD,
 * and DLT-PATCH of a free ingress (DENY SNVS) counts as done on a retry.
 */
#include "drivers/internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- parsing ---------------------------------------------------------------- */

int tl1_parse_cmd(char *text, struct tl1_cmd *cmd, struct ofc_error *err)
{
	char *p = text, *end;
	size_t vlen;

	memset(cmd, 0, sizeof(*cmd));
	while (*p && isspace((unsigned char)*p))
		p++;
	end = p + strlen(p);
	while (end > p && isspace((unsigned char)end[-1]))
		*--end = 0;
	for (char *q = p; *q; q++)
		if (!isprint((unsigned char)*q))
			return ofc_error_set(err, OFC_E_INPUT, "non-printable byte 0x%02x",
					     (unsigned char)*q);
	vlen = strcspn(p, ":");
	if (vlen == 0 || vlen >= sizeof(cmd->verb))
		return ofc_error_set(err, OFC_E_INPUT, "missing or overlong verb");
	for (size_t i = 0; i < vlen; i++) {
		char c = (char)toupper((unsigned char)p[i]);

		if (!isalnum((unsigned char)c) && c != '-')
			return ofc_error_set(err, OFC_E_INPUT, "bad verb");
		cmd->verb[i] = c;
	}
	p += vlen;
	while (*p == ':') {
		*p++ = 0;
		if (cmd->nfield == ARRAY_SIZE(cmd->field))
			return ofc_error_set(err, OFC_E_INPUT, "too many fields");
		cmd->field[cmd->nfield++] = p;
		p += strcspn(p, ":");
	}
	return 0;
}

/* ---- session ------------------------------------------------------------------ */

static void reply_reset(struct tl1_reply *r)
{
	for (uint32_t i = 0; i < r->nlines; i++)
		free(r->lines[i]);
	r->nlines = 0;
	r->compld = false;
	r->code[0] = 0;
}

void tl1_reply_free(struct tl1_reply *r)
{
	reply_reset(r);
	free(r->lines);
	memset(r, 0, sizeof(*r));
}

static void session_drop(struct tl1_session *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	sb_reset(&s->in);
}

static char *trim_line(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\r' || e[-1] == '\t'))
		*--e = 0;
	return s;
}

/* A decimal number of at most 10 digits at *p, no sign, no wrap: sscanf's
 * %u took "4294967298" for 2 and "-1" for 4294967295. */
int tl1_take_u32(const char **p, uint32_t *v)
{
	uint64_t x = 0;
	const char *q = *p;

	while (*q >= '0' && *q <= '9' && q - *p < 11)
		x = x * 10 + (uint64_t)(*q++ - '0');
	if (q == *p || (*q >= '0' && *q <= '9') || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	*p = q;
	return 0;
}

/* Parse one reply block (the text before a ';' line). Returns 1 when it
 * answers ctag, 0 when it answers an older ctag (a late reply to a command
 * that timed out: skip it), -1 on anything that is not a TL1 reply. */
static int parse_block(char *block, uint32_t ctag, struct tl1_reply *r, struct ofc_error *err)
{
	char *save = NULL, *line;
	bool seen_m = false;

	reply_reset(r);
	for (line = strtok_r(block, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *t = trim_line(line);

		if (!*t)
			continue;
		if (!seen_m) {
			uint32_t got;
			const char *end;
			char status[16];

			if (t[0] != 'M' || t[1] != ' ') {
				/* The header: source id, date and time. */
				if (line[0] == ' ')
					continue;
				return ofc_error_setr(
				    err, OFC_E_RUNTIME, OFC_R_GARBAGE,
				    "garbage reply (expected 'M  CTAG COMPLD|DENY', got "
				    "'%.40s')",
				    t);
			}
			t += 2;
			while (*t == ' ')
				t++;
			end = t;
			if (tl1_take_u32(&end, &got) < 0 || *end != ' ')
				return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
						      "garbage reply: bad ctag in "
						      "'M %.40s'",
						      t);
			if (sscanf(end, " %15s", status) != 1)
				return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
						      "garbage reply: no status");
			if (strcmp(status, "COMPLD") == 0)
				r->compld = true;
			else if (strcmp(status, "DENY") != 0)
				return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
						      "garbage reply: status '%.15s'", status);
			/* ctags start at 1: ctag 0 is how a switch answers a
			 * command it could not parse (docs/tl1.md). Never a
			 * stale reply to skip. */
			if (got == 0)
				return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
						      "the device could not parse the command "
						      "(%s with ctag 0)",
						      r->compld ? "COMPLD" : "DENY");
			if (got < ctag)
				return 0;
			if (got != ctag)
				return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
						      "reply for ctag %u while waiting for %u", got,
						      ctag);
			seen_m = true;
			continue;
		}
		if (!r->compld && !r->code[0] && t[0] != '"' && t[0] != '/') {
			snprintf(r->code, sizeof(r->code), "%.15s", t);
			continue;
		}
		GROW(r->lines, r->lines_cap, (size_t)r->nlines + 1);
		r->lines[r->nlines++] = xstrdup(t);
	}
	if (!seen_m)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
				      "garbage reply: no 'M' line");
	return 1;
}

int tl1_take_reply(struct strbuf *in, uint32_t ctag, struct tl1_reply *r, struct ofc_error *err)
{
	/* A complete block ends with a line holding only ';'. */
	char *buf = in->buf;
	size_t len = in->len, start = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c != '\r' && c != '\n' && c != '\t' && (c < 0x20 || c > 0x7e))
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
					      "garbage reply: byte 0x%02x is not TL1 text", c);
		if (c == '\n') {
			char *ln = buf + start;
			size_t ll = i - start;

			while (ll && (ln[ll - 1] == '\r' || ln[ll - 1] == ' '))
				ll--;
			while (ll && *ln == ' ') {
				ln++;
				ll--;
			}
			if (ll == 1 && *ln == ';') {
				char *block = xstrndup(buf, start);
				int rc = parse_block(block, ctag, r, err);

				free(block);
				memmove(buf, buf + i + 1, len - i - 1);
				in->len = len - i - 1;
				buf[in->len] = 0;
				if (rc != 0)
					return rc;
				i = (size_t)-1; /* rescan what is left */
				len = in->len;
				start = 0;
				continue;
			}
			start = i + 1;
		}
	}
	return 0;
}

int tl1_parse_xconn(const char *line, uint32_t ports, uint32_t *in, uint32_t *out)
{
	const char *p = line;
	uint32_t i, e;

	/* "IN,EGRESS", egress numbered N+1..2N (docs/tl1.md); nothing after. */
	if (*p++ != '"' || tl1_take_u32(&p, &i) < 0 || *p++ != ',' || tl1_take_u32(&p, &e) < 0 ||
	    *p++ != '"' || *p)
		return -1;
	if (i < 1 || i > ports || e <= ports || (uint64_t)e > 2 * (uint64_t)ports)
		return -1;
	*in = i;
	*out = e - ports;
	return 0;
}

size_t tl1_reply_bound(uint32_t ports)
{
	uint64_t b = (uint64_t)TL1_MAX_REPLY + (uint64_t)ports * TL1_REPLY_PER_PORT;

	return b > TL1_REPLY_CEILING ? TL1_REPLY_CEILING : (size_t)b;
}

/* Whether the bytes just read (chunk) may let tl1_take_reply, which scans
 * all that came, finish or fail the reply: they hold a ';' or a byte that
 * is not TL1 text, or end a line that began with a ';' before them (in).
 * Scanning only then keeps a read-back of a large switch (a megabyte in
 * 4 KiB reads) linear, not a scan of the whole reply after every read. */
bool tl1_may_finish(const struct strbuf *in, const char *chunk, size_t n)
{
	const char *nl;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)chunk[i];

		if (c == ';' || (c != '\r' && c != '\n' && c != '\t' && (c < 0x20 || c > 0x7e)))
			return true;
	}
	if (!memchr(chunk, '\n', n) || !in->len)
		return false;
	nl = memrchr(in->buf, '\n', in->len);
	nl = nl ? nl + 1 : in->buf;
	return memchr(nl, ';', in->len - (size_t)(nl - in->buf)) != NULL;
}

/* Whether the fence is past what it was (until): the lease was renewed. */
static bool fence_moved(const struct device *dev, double until)
{
	struct ofc_error e = {0};
	double again = until + 3600;

	return device_fence(dev, &again, &e) == 0 && again > until;
}

/* Read until the reply to ctag is complete. */
static int read_reply(const struct device *dev, struct tl1_session *s, uint32_t ctag, double own,
		      struct tl1_reply *r, struct ofc_error *err)
{
	size_t bound = tl1_reply_bound(dev->cfg.ports);
	bool look = true; /* (what is left of an earlier read may hold it) */

	for (;;) {
		int rc = look ? tl1_take_reply(&s->in, ctag, r, err) : 0;

		if (rc != 0)
			return rc < 0 ? -1 : 0;
		if (s->in.len > bound)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TOO_BIG,
					      "reply larger than %zu bytes, the bound for "
					      "'%s' (%u ports)",
					      bound, dev->cfg.name ? dev->cfg.name : "?",
					      dev->cfg.ports);
		/* Up to the command's own deadline (own) or the fence, which
		 * moves on while the lease is renewed: a read-back of a large
		 * switch may outlast one lease's span. Nothing is sent. */
		char chunk[4096];
		double deadline = own;
		struct ofc_error fenced = {0};
		if (device_fence(dev, &deadline, &fenced) < 0)
			deadline = now_seconds(); /* (past it: timed out, as ever) */
		long n = fd_read_some(s->fd, chunk, sizeof(chunk), deadline, err);
		if (n < 0 && err->reason == OFC_R_TIMEOUT && deadline < own &&
		    fence_moved(dev, deadline)) {
			ofc_error_clear(err);
			continue;
		}
		if (n < 0)
			return -1;
		if (n == 0)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_CLOSED,
					      "connection closed by the device");
		look = tl1_may_finish(&s->in, chunk, (size_t)n);
		sb_add(&s->in, chunk, (size_t)n);
	}
}

/* One command on the current session; no retries. */
static int exchange(struct device *dev, struct tl1_session *s, const char *verb, struct tl1_args a,
		    struct tl1_reply *r, struct ofc_error *err)
{
	double own = now_seconds() + dev->cfg.timeout + s->extra_time, deadline = own;
	uint32_t ctag;
	char *cmd;
	int rc;

	/* A fenced controller sends nothing, and waits for no answer past
	 * its fence (read_reply: past where the fence is while it waits). */
	if (device_fence(dev, &deadline, err) < 0)
		return -1;
	ctag = ++s->ctag;
	cmd = xasprintf("%s%s%u%s;\r\n", verb, a.pre, ctag, a.post);
	dev->stats.commands++;
	rc = fd_write_all(s->fd, cmd, strlen(cmd), deadline, err);
	explicit_bzero(cmd, strlen(cmd)); /* ACT-USER carries the password */
	free(cmd);
	if (rc == 0)
		rc = read_reply(dev, s, ctag, own, r, err);
	return rc;
}

bool tl1_open_session(const struct device *dev)
{
	const struct tl1_session *s = dev->priv;

	return s && s->fd >= 0;
}

int tl1_send(struct device *dev, uint32_t n, const char *const *verb, const struct tl1_args *a,
	     uint32_t *first_ctag, struct ofc_error *err)
{
	struct tl1_session *s = dev->priv;
	double deadline = now_seconds() + dev->cfg.timeout + s->extra_time;
	struct strbuf cmds = {0};
	int rc;

	if (s->fd < 0)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_CLOSED, "no session");
	if (device_fence(dev, &deadline, err) < 0)
		return -1;
	*first_ctag = s->ctag + 1;
	for (uint32_t i = 0; i < n; i++)
		sb_printf(&cmds, "%s%s%u%s;\r\n", verb[i], a[i].pre, ++s->ctag, a[i].post);
	dev->stats.commands += n;
	rc = fd_write_all(s->fd, cmds.buf, cmds.len, deadline, err);
	sb_free(&cmds);
	return rc;
}

int tl1_await(struct device *dev, uint32_t ctag, struct tl1_reply *r, struct ofc_error *err)
{
	struct tl1_session *s = dev->priv;

	if (s->fd < 0)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_CLOSED, "no session");
	/* its own time starts when the switch gets to it: after the one before */
	return read_reply(dev, s, ctag, now_seconds() + dev->cfg.timeout + s->extra_time, r, err);
}

void tl1_drop(struct device *dev)
{
	session_drop(dev->priv);
}

static int login(struct device *dev, struct tl1_session *s, struct ofc_error *err)
{
	struct tl1_reply r = {0};
	char pre[CRED_MAX + 8], post[CRED_MAX + 8];
	int rc;

	s->fd = tcp_connect(dev->cfg.address, dev->cfg.timeout, err);
	if (s->fd < 0)
		return -1;
	snprintf(pre, sizeof(pre), "::%s:", s->cred.user);
	snprintf(post, sizeof(post), "::%s", s->cred.password);
	rc = exchange(dev, s, "ACT-USER", (struct tl1_args){pre, post}, &r, err);
	explicit_bzero(post, sizeof(post));
	if (rc == 0 && !r.compld)
		/* Not even the user name: it comes from the credentials file. */
		rc = ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_AUTH,
				    "login refused at %s (%s): check the credentials file",
				    dev->cfg.address, r.code[0] ? r.code : "DENY");
	if (rc < 0)
		session_drop(s);
	tl1_reply_free(&r);
	return rc;
}

int tl1_command(struct device *dev, const char *verb, struct tl1_args args, struct tl1_reply *r,
		uint32_t *attempt, struct ofc_error *err)
{
	struct tl1_session *s = dev->priv;
	struct ofc_error last = {0};

	/* Fenced: not even a connection (nor a retry) */
	if (device_fence(dev, NULL, err) < 0)
		return -1;
	for (uint32_t a = 0; a <= dev->cfg.retries; a++) {
		if (a)
			dev->stats.retries++;
		if (s->fd < 0) {
			if (login(dev, s, &last) < 0) {
				if (last.reason == OFC_R_AUTH || last.reason == OFC_R_FENCED) {
					*err = last;
					return -1;
				}
				continue;
			}
		}
		if (exchange(dev, s, verb, args, r, &last) == 0) {
			*attempt = a;
			return 0;
		}
		session_drop(s);
		if (last.reason == OFC_R_FENCED)
			break;
	}
	*err = last;
	ofc_error_prefix(err, "%s (after %u attempt%s)", verb, dev->cfg.retries + 1,
			 dev->cfg.retries ? "s" : "");
	return -1;
}

int tl1_driver_open(struct device *dev, double extra_time, struct ofc_error *err)
{
	struct tl1_session *s = xcalloc(1, sizeof(*s));

	s->fd = -1;
	s->extra_time = extra_time;
	if (credentials_load(dev->cfg.credentials, dev->cfg.credentials_dir, &s->cred, err) < 0) {
		free(s);
		return -1;
	}
	if (!s->cred.password[0]) { /* a private key alone is for SSH */
		credentials_wipe(&s->cred);
		free(s);
		ofc_error_at(err, OFC_E_INPUT, dev->cfg.credentials, 0, 0,
			     "TL1 logs in with a password: the credentials file has none");
		err->reason = OFC_R_CREDENTIALS;
		return -1;
	}
	dev->priv = s;
	/* Log in now, so a wrong password or a dead device shows before any plan. */
	for (uint32_t a = 0; a <= dev->cfg.retries; a++) {
		if (login(dev, s, err) == 0)
			return 0;
		if (err->reason == OFC_R_AUTH)
			break;
	}
	tl1_driver_close(dev);
	return -1;
}

int tl1_refused(const struct op *op, const struct tl1_reply *r, struct ofc_error *err)
{
	char what[64];

	op_describe(op, what, sizeof(what));
	return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED, "device refused %s (%s%s%s)", what,
			      r->code[0] ? r->code : "DENY", r->nlines ? ": " : "",
			      r->nlines ? r->lines[0] : "");
}

void tl1_driver_close(struct device *dev)
{
	struct tl1_session *s = dev->priv;

	if (!s)
		return;
	if (s->fd >= 0) {
		/* Log out politely; the switch drops the session either way. */
		struct tl1_reply r = {0};
		struct ofc_error ignore = {0};
		char pre[CRED_MAX + 8];

		snprintf(pre, sizeof(pre), "::%s:", s->cred.user);
		exchange(dev, s, "CANC-USER", (struct tl1_args){pre, ":"}, &r, &ignore);
		tl1_reply_free(&r);
	}
	session_drop(s);
	sb_free(&s->in);
	credentials_wipe(&s->cred);
	free(s);
	dev->priv = NULL;
}
