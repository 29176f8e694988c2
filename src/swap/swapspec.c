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
 * the command line (--swap) or one per line of a uswaptab file; the
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

#define SPEC_FIELDS	"prio=, size=, node=, discard or direct"
#define SPEC_SYNTAX	"PATH[,prio=N][,size=SIZE][,node=N][,discard][,direct]"
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

enum spec_field { F_PRIO, F_SIZE, F_NODE, F_DISCARD, F_DIRECT, NR_FIELDS };

static const struct {
	const char *name;
	bool value;		/* takes "=VALUE" */
	const char *expect;	/* for "needs a value" */
} spec_fields[NR_FIELDS] = {
	[F_PRIO]	= { "prio",	true,  "prio=N with N in 0..32767" },
	[F_SIZE]	= { "size",	true,  "size=SIZE, at least 2M" },
	[F_NODE]	= { "node",	true,  "node=N with N in 0..1023" },
	[F_DISCARD]	= { "discard",	false, NULL },
	[F_DIRECT]	= { "direct",	false, NULL },
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

/* Apply one "name[=value]" field (already split) to *sp. */
static int spec_field(struct swap_spec *sp, enum spec_field f, const char *v,
		      size_t len, char *msg)
{
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

	if (!len) {
		err_msg(msg, MSG_LEN, "empty field after \",\" (expected " SPEC_FIELDS ")");
		return -EINVAL;
	}
	for (f = 0; f < NR_FIELDS; f++) {
		if (span_is(s, nlen, spec_fields[f].name))
			break;
	}
	if (f == NR_FIELDS) {
		err_msg(msg, MSG_LEN, "unknown field \"%s\" (expected " SPEC_FIELDS ")",
			show(s, nlen, SHOW_MAX, buf, sizeof(buf)));
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
