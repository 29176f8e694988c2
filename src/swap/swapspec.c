// SPDX-License-Identifier: MIT
/*
 * swapspec.c - the swap device spec and the uswaptab file.
 *
 * One of the three parts of several swap devices (swapdev.h): this one
 * reads what the user says about each device; swapavail.c decides which
 * device a folio goes to, and topology.c says which NUMA node a device is
 * attached to.  What the kernel learns from swapon -p and the swap lines
 * of /etc/fstab, uswap learns here.
 *
 * A device is "PATH[,prio=N][,size=SIZE][,node=N][,discard][,direct]" on
 * the command line (--swap) or one per line of a uswaptab file, or a
 * remote one, "redis://HOST:PORT[,HOST:PORT...]" with the fields of a
 * Redis Cluster (user=, password-file=, tls=, replicas=); the
 * parsers check every field and name the one that is wrong, and never
 * call malloc (the preload library may parse before main; a file is read
 * into a prim_alloc() buffer).  Nothing is half-applied: the result is
 * written only when the whole spec, or the whole file, parsed.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "log.h"
#include "prim.h"
#include "swap.h"
#include "uswap.h"
#include "swapdev.h"
#include "redis_store.h"

#define SPEC_FIELDS	"prio=, size=, node=, discard or direct"
#define REMOTE_FIELDS	"HOST:PORT, prio=, size=, node=, user=, password-file=, tls=, replicas= or encrypt="
#define SPEC_SYNTAX	"PATH[,prio=N][,size=SIZE][,node=N][,discard][,direct]"
#define REMOTE_SYNTAX	"redis://HOST:PORT[,HOST:PORT...][,prio=N][,size=SIZE][,node=N][,user=U][,password-file=F][,tls=off][,replicas=K][,encrypt=on|off]"
#define SWAPTAB_MAX_BYTES	(64u << 10)
#define MSG_LEN		512
#define SHOW_MAX	64	/* bytes of user input quoted in a message */

/*
 * User input as it may appear in a message: printable ASCII as is, other
 * bytes as \xNN, '"' and '\' escaped, cut at max bytes with "...".
 */
static const char *show(const char *s, size_t len, size_t max, char *buf,
			size_t buflen)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o = 0;

	assert(buflen >= 8);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i == max || o + 8 > buflen) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (c == '"' || c == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)c;
		} else if (c < 0x20 || c >= 0x7f) {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 15];
		} else {
			buf[o++] = (char)c;
		}
	}
	buf[o] = 0;
	return buf;
}

/* ---- specs ------------------------------------------------------------ */

enum spec_field {
	F_PRIO, F_SIZE, F_NODE, F_DISCARD, F_DIRECT,
	F_USER, F_PASSWORD_FILE, F_TLS, F_REPLICAS, F_ENCRYPT, NR_FIELDS
};

enum field_use { FOR_ALL, FOR_LOCAL, FOR_REMOTE };

static const struct {
	const char *name;
	bool value;		/* takes "=VALUE" */
	enum field_use use;
	const char *expect;	/* for "needs a value" */
} spec_fields[NR_FIELDS] = {
	[F_PRIO]	= { "prio",	true,  FOR_ALL, "prio=N with N in 0..32767" },
	[F_SIZE]	= { "size",	true,  FOR_ALL, "size=SIZE, at least 2M" },
	[F_NODE]	= { "node",	true,  FOR_ALL, "node=N with N in 0..1023" },
	[F_DISCARD]	= { "discard",	false, FOR_LOCAL, NULL },
	[F_DIRECT]	= { "direct",	false, FOR_LOCAL, NULL },
	[F_USER]	= { "user",	true,  FOR_REMOTE, "user=NAME" },
	[F_PASSWORD_FILE] = { "password-file", true, FOR_REMOTE, "password-file=FILE" },
	[F_TLS]		= { "tls",	true,  FOR_REMOTE, "tls=off" },
	[F_REPLICAS]	= { "replicas",	true,  FOR_REMOTE, "replicas=K with K in 0..8" },
	[F_ENCRYPT]	= { "encrypt",	true,  FOR_REMOTE, "encrypt=on or encrypt=off" },
};

static bool span_is(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && !memcmp(s, word, len);
}

static int spec_int(const char *name, const char *v, size_t len, long lo,
		    long hi, int *out, char *msg)
{
	char buf[SHOW_MAX * 4 + 8];
	int ret = swapdev_parse_int(v, len, lo, hi, out);

	if (ret == -EINVAL)
		err_msg(msg, MSG_LEN, "%s \"%s\" is not a number (expected %ld..%ld)",
			name, show(v, len, SHOW_MAX, buf, sizeof(buf)), lo, hi);
	else if (ret)
		err_msg(msg, MSG_LEN, "%s %s is out of range (expected %ld..%ld)",
			name, show(v, len, SHOW_MAX, buf, sizeof(buf)), lo, hi);
	return ret ? -EINVAL : 0;
}

static int spec_size(const char *v, size_t len, uint64_t *out, char *msg)
{
	char val[128], buf[SHOW_MAX * 4 + 8];
	uint64_t size;
	int ret = -EINVAL;

	if (len < sizeof(val)) {
		memcpy(val, v, len);
		val[len] = 0;
		ret = uswap_size_parse(val, &size);
	}
	show(v, len, SHOW_MAX, buf, sizeof(buf));
	if (ret == -ERANGE || (!ret && size > SWAP_SPEC_MAX_SIZE)) {
		err_msg(msg, MSG_LEN, "size %s is too large (expected at most 1T per device)",
			buf);
		return -EINVAL;
	}
	if (ret) {
		err_msg(msg, MSG_LEN, "size \"%s\" is not a size (expected a number with an optional K, M, G or T suffix)",
			buf);
		return -EINVAL;
	}
	if (size < SWAP_SPEC_MIN_SIZE) {
		err_msg(msg, MSG_LEN, "size %s is too small (expected at least 2M)",
			buf);
		return -EINVAL;
	}
	*out = size / SWAP_SPEC_MIN_SIZE * SWAP_SPEC_MIN_SIZE;
	return 0;
}

/*
 * A name or a path in a field (user=, password-file=): printable, no
 * spaces, not empty, shorter than dstlen; copied into dst.  what says
 * what it should be, for the message.
 */
static int spec_word(const char *name, const char *what, const char *v,
		     size_t len, char *dst, size_t dstlen, char *msg)
{
	char buf[SHOW_MAX * 4 + 8];
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)v[i] <= 0x20 || v[i] == 0x7f)
			break;
	if (!len || i < len || len >= dstlen) {
		err_msg(msg, MSG_LEN, "%s \"%s\" is not %s (expected 1..%zu printable bytes without spaces)",
			name, show(v, len, SHOW_MAX, buf, sizeof(buf)), what,
			dstlen - 1);
		return -EINVAL;
	}
	memcpy(dst, v, len);
	dst[len] = 0;
	return 0;
}

static int spec_tls(const char *v, size_t len, char *msg)
{
	char buf[SHOW_MAX * 4 + 8];

	if (span_is(v, len, "off"))
		return 0;
	if (span_is(v, len, "on"))
		err_msg(msg, MSG_LEN, "tls=on is not available: this build's hiredis (0.14) has no TLS (expected tls=off; reach the cluster over a network you trust, or through a TLS tunnel)");
	else
		err_msg(msg, MSG_LEN, "tls \"%s\" is not on or off (expected tls=off)",
			show(v, len, SHOW_MAX, buf, sizeof(buf)));
	return -EINVAL;
}

static int spec_encrypt(struct swap_spec *sp, const char *v, size_t len,
			char *msg)
{
	char buf[SHOW_MAX * 4 + 8];

	if (span_is(v, len, "on") || span_is(v, len, "off")) {
		sp->remote_plain = span_is(v, len, "off");
		return 0;
	}
	err_msg(msg, MSG_LEN, "encrypt \"%s\" is not on or off (expected encrypt=on or encrypt=off)",
		show(v, len, SHOW_MAX, buf, sizeof(buf)));
	return -EINVAL;
}

/* One more HOST:PORT of a remote device, appended to sp->seeds. */
static int spec_seed(struct swap_spec *sp, const char *v, size_t len,
		     char *msg)
{
	char host[RS_HOST_MAX], buf[SHOW_MAX * 4 + 8];
	size_t have = strlen(sp->seeds);
	unsigned nr = 1;
	const char *p;
	int port;

	if (redis_parse_hostport(v, len, host, sizeof(host), &port)) {
		err_msg(msg, MSG_LEN, "\"%s\" is not HOST:PORT (expected a host name or address, \":\" and a port in 1..65535; an IPv6 address in brackets)",
			show(v, len, SHOW_MAX, buf, sizeof(buf)));
		return -EINVAL;
	}
	for (p = sp->seeds; *p; p++)
		nr += *p == ',';
	if ((have && nr >= RS_MAX_SEEDS) || have + len + 2 > sizeof(sp->seeds)) {
		err_msg(msg, MSG_LEN, "too many addresses (expected at most %u, %zu bytes in all)",
			RS_MAX_SEEDS, sizeof(sp->seeds) - 1);
		return -EINVAL;
	}
	if (have)
		sp->seeds[have++] = ',';
	memcpy(sp->seeds + have, v, len);
	sp->seeds[have + len] = 0;
	return 0;
}

/* Apply one "name[=value]" field (already split) to *sp. */
static int spec_field(struct swap_spec *sp, enum spec_field f, const char *v,
		      size_t len, char *msg)
{
	int replicas;

	switch (f) {
	case F_PRIO:
		return spec_int("prio", v, len, 0, SWAP_PRIO_MAX, &sp->prio,
				msg);
	case F_SIZE:
		return spec_size(v, len, &sp->size, msg);
	case F_NODE:
		return spec_int("node", v, len, 0, SWAP_MAX_NODES - 1,
				&sp->node, msg);
	case F_DISCARD:
		sp->discard = true;
		return 0;
	case F_DIRECT:
		sp->direct = true;
		return 0;
	case F_USER:
		return spec_word("user", "a user name", v, len, sp->user,
				 sizeof(sp->user), msg);
	case F_PASSWORD_FILE:
		return spec_word("password-file", "a file name", v, len,
				 sp->password_file, sizeof(sp->password_file), msg);
	case F_TLS:
		return spec_tls(v, len, msg);
	case F_REPLICAS:
		if (spec_int("replicas", v, len, 0, SWAP_REMOTE_REPLICAS_MAX,
			     &replicas, msg))
			return -EINVAL;
		sp->replicas = (unsigned)replicas;
		return 0;
	case F_ENCRYPT:
		return spec_encrypt(sp, v, len, msg);
	case NR_FIELDS:
		break;
	}
	return -EINVAL;
}

/* Parse one field s[0..len) of a spec; *seen has a bit per field given. */
static int spec_option(struct swap_spec *sp, const char *s, size_t len,
		       unsigned *seen, char *msg)
{
	const char *eq = memchr(s, '=', len);
	size_t nlen = eq ? (size_t)(eq - s) : len;
	char buf[SHOW_MAX * 4 + 8];
	unsigned f;

	const char *fields = sp->remote ? REMOTE_FIELDS : SPEC_FIELDS;

	if (!len) {
		err_msg(msg, MSG_LEN, "empty field after \",\" (expected %s)",
			fields);
		return -EINVAL;
	}
	if (sp->remote && !eq && memchr(s, ':', len))
		return spec_seed(sp, s, len, msg);
	for (f = 0; f < NR_FIELDS; f++) {
		if (span_is(s, nlen, spec_fields[f].name))
			break;
	}
	if (f == NR_FIELDS) {
		err_msg(msg, MSG_LEN, "unknown field \"%s\" (expected %s)",
			show(s, nlen, SHOW_MAX, buf, sizeof(buf)), fields);
		return -EINVAL;
	}
	if (spec_fields[f].use == (sp->remote ? FOR_LOCAL : FOR_REMOTE)) {
		err_msg(msg, MSG_LEN, "%s is for %s (expected %s)",
			spec_fields[f].name,
			sp->remote ? "a file or block device, not a redis:// device" :
				     "a redis:// device, not a file",
			fields);
		return -EINVAL;
	}
	if (*seen & (1u << f)) {
		err_msg(msg, MSG_LEN, "%s is given twice (expected each field at most once)",
			spec_fields[f].name);
		return -EINVAL;
	}
	*seen |= 1u << f;
	if (spec_fields[f].value && !eq) {
		err_msg(msg, MSG_LEN, "%s needs a value (expected %s)",
			spec_fields[f].name, spec_fields[f].expect);
		return -EINVAL;
	}
	if (!spec_fields[f].value && eq) {
		err_msg(msg, MSG_LEN, "%s takes no value (expected \"%s\" alone, not \"%s\")",
			spec_fields[f].name, spec_fields[f].name,
			show(s, len, SHOW_MAX, buf, sizeof(buf)));
		return -EINVAL;
	}
	if (eq)
		return spec_field(sp, f, eq + 1, len - nlen - 1, msg);
	return spec_field(sp, f, NULL, 0, msg);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/*
 * A path may not begin or end with a blank, nor hold a control character:
 * in "/x ,prio=5" or a line pasted with a tab, that is a typing mistake,
 * not a file name anyone means.
 */
static int spec_path_check(const char *s, size_t len, char *msg)
{
	char buf[SHOW_MAX * 4 + 8];
	size_t i;

	for (i = 0; i < len; i++) {
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
			err_msg(msg, MSG_LEN, "path \"%s\" contains a control character (expected a file or block device name)",
				show(s, len, SHOW_MAX, buf, sizeof(buf)));
			return -EINVAL;
		}
	}
	if (is_blank(s[0]) || is_blank(s[len - 1])) {
		err_msg(msg, MSG_LEN, "path \"%s\" begins or ends with a space (expected no spaces around fields)",
			show(s, len, SHOW_MAX, buf, sizeof(buf)));
		return -EINVAL;
	}
	return 0;
}

/* Parse the spec s[0..len) into *out; the message (no prefix) into msg. */
static int spec_parse(const char *s, size_t len, struct swap_spec *out,
		      char *msg)
{
	const char *end = s + len, *comma = memchr(s, ',', len);
	size_t plen = comma ? (size_t)(comma - s) : len;
	struct swap_spec sp = { .prio = SWAP_PRIO_AUTO, .node = -1 };
	unsigned seen = 0;
	int ret;

	if (!plen) {
		err_msg(msg, MSG_LEN, "empty path (expected " SPEC_SYNTAX ")");
		return -EINVAL;
	}
	if (plen >= sizeof(sp.path)) {
		err_msg(msg, MSG_LEN, "path is too long (%zu bytes, at most %zu)",
			plen, sizeof(sp.path) - 1);
		return -ENAMETOOLONG;
	}
	ret = spec_path_check(s, plen, msg);
	if (ret)
		return ret;
	memcpy(sp.path, s, plen);
	if (plen >= strlen(SWAP_REMOTE_PREFIX) &&
	    !memcmp(s, SWAP_REMOTE_PREFIX, strlen(SWAP_REMOTE_PREFIX))) {
		const size_t pre = strlen(SWAP_REMOTE_PREFIX);

		sp.remote = true;
		if (plen == pre) {
			err_msg(msg, MSG_LEN, "no address after redis:// (expected " REMOTE_SYNTAX ")");
			return -EINVAL;
		}
		ret = spec_seed(&sp, s + pre, plen - pre, msg);
		if (ret)
			return ret;
	}
	while (comma) {
		const char *f = comma + 1;

		comma = memchr(f, ',', (size_t)(end - f));
		ret = spec_option(&sp, f, (size_t)((comma ? comma : end) - f),
				  &seen, msg);
		if (ret)
			return ret;
	}
	*out = sp;
	return 0;
}

int swap_spec_parse(const char *s, struct swap_spec *out, char *err,
		    size_t errlen)
{
	char msg[MSG_LEN], buf[SWAP_PATH_MAX * 4 + 8];
	int ret;

	if (!s || !out)
		return -EINVAL;
	ret = spec_parse(s, strlen(s), out, msg);
	if (ret)
		err_msg(err, errlen, "--swap \"%s\": %s",
			show(s, strlen(s), SWAP_PATH_MAX + 32, buf, sizeof(buf)),
			msg);
	return ret;
}

/* The SPEC part of a uswaptab line: comment cut off, trimmed. */
static void swaptab_trim(const char **b, const char **e)
{
	const char *p;

	for (p = *b; p < *e; p++) {
		if (*p == '#' && (p == *b || is_blank(p[-1]))) {
			*e = p;
			break;
		}
	}
	while (*b < *e && is_blank(**b))
		++*b;
	while (*e > *b && is_blank((*e)[-1]))
		--*e;
}

int swaptab_parse_text(const char *name, const char *text,
		       struct swap_spec *out, unsigned max, unsigned *n,
		       char *err, size_t errlen)
{
	struct swap_spec tab[SWAP_MAX_DEVICES];
	unsigned line_of[SWAP_MAX_DEVICES];
	unsigned limit = MIN(max, SWAP_MAX_DEVICES), line = 0, nr = 0, i;
	const char *p, *b, *e, *eol;
	char msg[MSG_LEN];
	int ret;

	if (!name || !text || !n || (max && !out))
		return -EINVAL;
	for (p = text; *p;) {
		eol = strchrnul(p, '\n');
		b = p;
		e = eol;
		p = *eol ? eol + 1 : eol;
		line++;
		swaptab_trim(&b, &e);
		if (b == e)
			continue;
		if (nr == limit) {
			if (limit == SWAP_MAX_DEVICES)
				err_msg(err, errlen, "%s:%u: too many swap devices (at most %u: a swap entry has %u bits for the device)",
					name, line, limit, SWP_TYPE_BITS);
			else
				err_msg(err, errlen, "%s:%u: too many swap devices (at most %u)",
					name, line, limit);
			return -E2BIG;
		}
		ret = spec_parse(b, (size_t)(e - b), &tab[nr], msg);
		if (ret) {
			err_msg(err, errlen, "%s:%u: %s", name, line, msg);
			return ret;
		}
		for (i = 0; i < nr; i++) {
			if (!strcmp(tab[i].path, tab[nr].path)) {
				char buf[SWAP_PATH_MAX * 4 + 8];

				err_msg(err, errlen, "%s:%u: \"%s\" is already on line %u (expected each device once)",
					name, line,
					show(tab[nr].path, strlen(tab[nr].path),
					     SWAP_PATH_MAX, buf, sizeof(buf)),
					line_of[i]);
				return -EINVAL;
			}
		}
		line_of[nr++] = line;
	}
	if (!nr) {
		err_msg(err, errlen, "%s: no swap device (expected one " SPEC_SYNTAX " per line)",
			name);
		return -EINVAL;
	}
	memcpy(out, tab, nr * sizeof(tab[0]));
	*n = nr;
	return 0;
}

/* What kind of file st is, for a message ("a FIFO", ...). */
static const char *file_kind(const struct stat *st)
{
	switch (st->st_mode & S_IFMT) {
	case S_IFDIR:
		return "a directory";
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	case S_IFLNK:
		return "a symbolic link";
	}
	return "not a regular file";
}

/*
 * Open the uswaptab, checked on its descriptor, never on its path: a
 * regular file (not a link: O_NOFOLLOW; not a FIFO, which would block the
 * reader for ever: O_NONBLOCK, then the type), owned by the user or root,
 * which nobody else may write, of at most SWAPTAB_MAX_BYTES: the table
 * says which files uswap writes the program's memory to.  fd or -errno,
 * with the message in err.
 */
static int swaptab_open(const char *file, char *err, size_t errlen)
{
	const int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
			  O_NOCTTY;
	struct stat st;
	int fd, ret;

	fd = prim_open(file, flags, 0);
	if (fd < 0) {
		ret = fd;
		if (ret == -ELOOP)
			err_msg(err, errlen, "%s: is a symbolic link (expected a regular file)",
				file);
		else
			err_msg(err, errlen, "%s: %s", file, strerror(-ret));
		return ret;
	}
	ret = prim_fstat(fd, &st);
	if (ret) {
		err_msg(err, errlen, "%s: %s", file, strerror(-ret));
		goto err_close;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		err_msg(err, errlen, "%s: is %s (expected a regular file)", file,
			file_kind(&st));
		goto err_close;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		ret = -EPERM;
		err_msg(err, errlen, "%s: belongs to another user (uid %u; expected a file of yours or root's)",
			file, (unsigned)st.st_uid);
		goto err_close;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		ret = -EPERM;
		err_msg(err, errlen, "%s: group or others may write it (mode %04o; expected a file only its owner can write: chmod go-w)",
			file, (unsigned)(st.st_mode & 07777));
		goto err_close;
	}
	if (st.st_size > (off_t)SWAPTAB_MAX_BYTES) {
		ret = -EFBIG;
		err_msg(err, errlen, "%s: too large (expected at most %u KiB)",
			file, SWAPTAB_MAX_BYTES >> 10);
		goto err_close;
	}
	return fd;

err_close:
	prim_close(fd);
	return ret;
}

int swaptab_parse_file(const char *file, struct swap_spec *out, unsigned max,
		       unsigned *n, char *err, size_t errlen)
{
	const size_t cap = SWAPTAB_MAX_BYTES + 1;
	ssize_t len;
	char *buf;
	int fd, ret;

	if (!file)
		return -EINVAL;
	fd = swaptab_open(file, err, errlen);
	if (fd < 0)
		return fd;
	buf = prim_alloc(cap + 1);
	if (!buf) {
		err_msg(err, errlen, "%s: out of memory", file);
		ret = -ENOMEM;
		goto err_close;
	}
	/* A regular file: O_NONBLOCK changes nothing for its reads. */
	len = prim_read_all(fd, buf, cap);
	if (len < 0) {
		ret = (int)len;
		err_msg(err, errlen, "%s: %s", file, strerror(-ret));
	} else if ((size_t)len == cap) {
		ret = -EFBIG;
		err_msg(err, errlen, "%s: too large (expected at most %u KiB)",
			file, SWAPTAB_MAX_BYTES >> 10);
	} else if (memchr(buf, 0, (size_t)len)) {
		ret = -EINVAL;
		err_msg(err, errlen, "%s: contains a NUL byte (expected text)",
			file);
	} else {
		buf[len] = 0;
		ret = swaptab_parse_text(file, buf, out, max, n, err, errlen);
	}
	prim_free(buf, cap + 1);
err_close:
	prim_close(fd);
	return ret;
}
