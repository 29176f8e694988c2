// SPDX-License-Identifier: MIT
/*
 * json.c - a small JSON reader and writer for the CLI.
 *
 * uswap run merges the statistics that each process of the tree wrote
 * (see json.h); this is a complete but minimal RFC 8259 parser for that:
 * recursive descent into a tree, nesting limited to JSON_MAX_DEPTH,
 * strings decoded to UTF-8 (\u0000 is refused, so strings stay C strings),
 * numbers kept as written and, when whole and non-negative, as uint64_t.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define JSON_MAX_DEPTH	64

struct parser {
	const char *s;
	size_t len, pos;
	int depth;
	int err;		/* first error: -EINVAL or -ENOMEM */
	char *msg;
	size_t msglen;
};

static void __attribute__((format(printf, 2, 3)))
fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->err)
		return;
	p->err = -EINVAL;
	if (!p->msg || !p->msglen)
		return;
	n = snprintf(p->msg, p->msglen, "offset %zu: ", p->pos);
	if (n < 0 || (size_t)n >= p->msglen)
		return;
	va_start(ap, fmt);
	vsnprintf(p->msg + n, p->msglen - (size_t)n, fmt, ap);
	va_end(ap);
}

static void fail_nomem(struct parser *p)
{
	if (!p->err) {
		p->err = -ENOMEM;
		if (p->msg && p->msglen)
			snprintf(p->msg, p->msglen, "out of memory");
	}
}

static int peek(const struct parser *p)
{
	return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len && strchr(" \t\r\n", p->s[p->pos]) &&
	       p->s[p->pos])
		p->pos++;
}

static bool literal(struct parser *p, const char *word)
{
	size_t n = strlen(word);

	if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n))
		return false;
	p->pos += n;
	return true;
}

/* A growing byte buffer for decoded strings. */
struct buf {
	char *b;
	size_t n, cap;
};

static bool buf_put(struct buf *b, char c)
{
	if (b->n + 1 >= b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 32;
		char *nb = realloc(b->b, cap);

		if (!nb)
			return false;
		b->b = nb;
		b->cap = cap;
	}
	b->b[b->n++] = c;
	b->b[b->n] = 0;
	return true;
}

static bool buf_put_utf8(struct buf *b, uint32_t cp)
{
	if (cp < 0x80)
		return buf_put(b, (char)cp);
	if (cp < 0x800)
		return buf_put(b, (char)(0xc0 | cp >> 6)) &&
		       buf_put(b, (char)(0x80 | (cp & 0x3f)));
	if (cp < 0x10000)
		return buf_put(b, (char)(0xe0 | cp >> 12)) &&
		       buf_put(b, (char)(0x80 | ((cp >> 6) & 0x3f))) &&
		       buf_put(b, (char)(0x80 | (cp & 0x3f)));
	return buf_put(b, (char)(0xf0 | cp >> 18)) &&
	       buf_put(b, (char)(0x80 | ((cp >> 12) & 0x3f))) &&
	       buf_put(b, (char)(0x80 | ((cp >> 6) & 0x3f))) &&
	       buf_put(b, (char)(0x80 | (cp & 0x3f)));
}

/* Four hex digits of a \u escape; -1 when they are not. */
static long hex4(struct parser *p)
{
	long v = 0;
	int i;

	if (p->len - p->pos < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		char c = p->s[p->pos + (size_t)i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	p->pos += 4;
	return v;
}

/* A string literal at p->pos (the opening quote); NULL on error. */
static char *parse_string(struct parser *p)
{
	struct buf b = { 0 };
	long cp, lo;
	int c;

	p->pos++;
	if (!buf_put(&b, 0))
		goto nomem;
	b.n = 0;
	for (;;) {
		c = peek(p);
		if (c < 0) {
			fail(p, "unterminated string");
			goto err_free;
		}
		p->pos++;
		if (c == '"')
			return b.b;
		if (c < 0x20) {
			p->pos--;
			fail(p, "control character in a string");
			goto err_free;
		}
		if (c != '\\') {
			if (!buf_put(&b, (char)c))
				goto nomem;
			continue;
		}
		c = peek(p);
		p->pos++;
		switch (c) {
		case '"': case '\\': case '/':
			break;
		case 'b':
			c = '\b';
			break;
		case 'f':
			c = '\f';
			break;
		case 'n':
			c = '\n';
			break;
		case 'r':
			c = '\r';
			break;
		case 't':
			c = '\t';
			break;
		case 'u':
			cp = hex4(p);
			if (cp >= 0xd800 && cp < 0xdc00 && literal(p, "\\u")) {
				lo = hex4(p);
				if (lo < 0xdc00 || lo > 0xdfff)
					cp = -1;
				else
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					     (lo - 0xdc00);
			} else if (cp >= 0xd800 && cp < 0xe000) {
				cp = -1;
			}
			if (cp <= 0) {
				fail(p, "bad \\u escape");
				goto err_free;
			}
			if (!buf_put_utf8(&b, (uint32_t)cp))
				goto nomem;
			continue;
		default:
			p->pos--;
			fail(p, "bad escape in a string");
			goto err_free;
		}
		if (!buf_put(&b, (char)c))
			goto nomem;
	}
nomem:
	fail_nomem(p);
err_free:
	free(b.b);
	return NULL;
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool parse_number(struct parser *p, struct json_value *v)
{
	size_t start = p->pos;
	bool whole = true;
	uint64_t u = 0;
	bool range = false;

	if (peek(p) == '-') {
		whole = false;
		p->pos++;
	}
	if (peek(p) == '0') {
		p->pos++;
	} else if (is_digit(peek(p))) {
		while (is_digit(peek(p))) {
			unsigned d = (unsigned)(peek(p) - '0');

			if (u > (UINT64_MAX - d) / 10)
				range = true;
			u = u * 10 + d;
			p->pos++;
		}
	} else {
		fail(p, "bad number");
		return false;
	}
	if (peek(p) == '.') {
		whole = false;
		p->pos++;
		if (!is_digit(peek(p))) {
			fail(p, "bad number");
			return false;
		}
		while (is_digit(peek(p)))
			p->pos++;
	}
	if (peek(p) == 'e' || peek(p) == 'E') {
		whole = false;
		p->pos++;
		if (peek(p) == '+' || peek(p) == '-')
			p->pos++;
		if (!is_digit(peek(p))) {
			fail(p, "bad number");
			return false;
		}
		while (is_digit(peek(p)))
			p->pos++;
	}
	v->text = strndup(p->s + start, p->pos - start);
	if (!v->text) {
		fail_nomem(p);
		return false;
	}
	v->is_uint = whole && !range;
	v->u = v->is_uint ? u : 0;
	return true;
}

static struct json_value *parse_value(struct parser *p);

/* Append item (and key, for objects) to v; false when out of memory. */
static bool add_member(struct json_value *v, char *key, struct json_value *item)
{
	struct json_value **items;
	char **keys;

	items = realloc(v->items, (v->n + 1) * sizeof(*items));
	if (!items)
		return false;
	v->items = items;
	if (v->type == JSON_OBJECT) {
		keys = realloc(v->keys, (v->n + 1) * sizeof(*keys));
		if (!keys)
			return false;
		v->keys = keys;
		keys[v->n] = key;
	}
	items[v->n++] = item;
	return true;
}

/* The members of an array or object after its opening bracket. */
static bool parse_members(struct parser *p, struct json_value *v)
{
	char close = v->type == JSON_OBJECT ? '}' : ']';
	struct json_value *item;
	char *key = NULL;

	p->pos++;
	skip_ws(p);
	if (peek(p) == close) {
		p->pos++;
		return true;
	}
	for (;;) {
		skip_ws(p);
		if (v->type == JSON_OBJECT) {
			if (peek(p) != '"') {
				fail(p, "expected a member name");
				return false;
			}
			key = parse_string(p);
			if (!key)
				return false;
			skip_ws(p);
			if (peek(p) != ':') {
				free(key);
				fail(p, "expected ':'");
				return false;
			}
			p->pos++;
		}
		item = parse_value(p);
		if (!item) {
			free(key);
			return false;
		}
		if (!add_member(v, key, item)) {
			free(key);
			json_free(item);
			fail_nomem(p);
			return false;
		}
		key = NULL;
		skip_ws(p);
		if (peek(p) == close) {
			p->pos++;
			return true;
		}
		if (peek(p) != ',') {
			fail(p, "expected ',' or '%c'", close);
			return false;
		}
		p->pos++;
	}
}

static struct json_value *parse_value(struct parser *p)
{
	struct json_value *v;
	bool ok = true;
	int c;

	skip_ws(p);
	if (p->depth >= JSON_MAX_DEPTH) {
		fail(p, "nested too deeply");
		return NULL;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		fail_nomem(p);
		return NULL;
	}
	c = peek(p);
	if (c == '{' || c == '[') {
		v->type = c == '{' ? JSON_OBJECT : JSON_ARRAY;
		p->depth++;
		ok = parse_members(p, v);
		p->depth--;
	} else if (c == '"') {
		v->type = JSON_STRING;
		v->text = parse_string(p);
		ok = v->text != NULL;
	} else if (c == '-' || is_digit(c)) {
		v->type = JSON_NUMBER;
		ok = parse_number(p, v);
	} else if (literal(p, "true")) {
		v->type = JSON_TRUE;
	} else if (literal(p, "false")) {
		v->type = JSON_FALSE;
	} else if (literal(p, "null")) {
		v->type = JSON_NULL;
	} else {
		fail(p, c < 0 ? "unexpected end" : "unexpected character");
		ok = false;
	}
	if (!ok) {
		json_free(v);
		return NULL;
	}
	return v;
}

int json_parse(const char *text, size_t len, struct json_value **out,
	       char *err, size_t errlen)
{
	struct parser p = {
		.s = text, .len = len, .msg = err, .msglen = errlen,
	};
	struct json_value *v;

	*out = NULL;
	v = parse_value(&p);
	if (v) {
		skip_ws(&p);
		if (p.pos < p.len)
			fail(&p, "junk after the value");
	}
	if (p.err) {
		json_free(v);
		return p.err;
	}
	*out = v;
	return 0;
}

void json_free(struct json_value *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->n; i++) {
		json_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->text);
	free(v);
}

const struct json_value *json_get(const struct json_value *obj,
				  const char *key)
{
	size_t i;

	if (!obj || obj->type != JSON_OBJECT)
		return NULL;
	for (i = 0; i < obj->n; i++) {
		if (!strcmp(obj->keys[i], key))
			return obj->items[i];
	}
	return NULL;
}

size_t utf8_len(const char *s)
{
	const unsigned char *c = (const unsigned char *)s;
	uint32_t cp, min;
	size_t n, i;

	if (c[0] < 0x80)
		return 1;
	if (c[0] >= 0xc2 && c[0] <= 0xdf) {
		n = 2;
		cp = c[0] & 0x1f;
		min = 0x80;
	} else if (c[0] >= 0xe0 && c[0] <= 0xef) {
		n = 3;
		cp = c[0] & 0x0f;
		min = 0x800;
	} else if (c[0] >= 0xf0 && c[0] <= 0xf4) {
		n = 4;
		cp = c[0] & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((c[i] & 0xc0) != 0x80)
			return 0;	/* the NUL ends it too */
		cp = cp << 6 | (c[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000))
		return 0;
	return n;
}

bool utf8_is_control(const char *s, size_t n)
{
	const unsigned char *c = (const unsigned char *)s;

	/* C0 and DEL; C1 (U+0080 to U+009F) is 0xc2 0x80..0x9f. */
	return (n == 1 && (c[0] < 0x20 || c[0] == 0x7f)) ||
	       (n == 2 && c[0] == 0xc2 && c[1] < 0xa0);
}

void json_write_string(FILE *f, const char *s)
{
	const char *c;
	size_t n;

	fputc('"', f);
	for (c = s; *c; c += n ? n : 1) {
		n = utf8_len(c);
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c == '\n')
			fputs("\\n", f);
		else if (*c == '\t')
			fputs("\\t", f);
		else if (!n)
			fputs("\\ufffd", f);	/* not UTF-8: JSON cannot hold it */
		else if (utf8_is_control(c, n))
			fprintf(f, "\\u%04x", n == 1 ? (unsigned char)*c :
				(unsigned char)c[1]);
		else
			fwrite(c, 1, n, f);
	}
	fputc('"', f);
}

void json_write(FILE *f, const struct json_value *v)
{
	size_t i;

	switch (v->type) {
	case JSON_NULL:
		fputs("null", f);
		break;
	case JSON_FALSE:
		fputs("false", f);
		break;
	case JSON_TRUE:
		fputs("true", f);
		break;
	case JSON_NUMBER:
		fputs(v->text, f);
		break;
	case JSON_STRING:
		json_write_string(f, v->text);
		break;
	case JSON_ARRAY:
	case JSON_OBJECT:
		fputc(v->type == JSON_OBJECT ? '{' : '[', f);
		for (i = 0; i < v->n; i++) {
			if (i)
				fputs(", ", f);
			if (v->type == JSON_OBJECT) {
				json_write_string(f, v->keys[i]);
				fputs(": ", f);
			}
			json_write(f, v->items[i]);
		}
		fputc(v->type == JSON_OBJECT ? '}' : ']', f);
		break;
	}
}
