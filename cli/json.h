/* SPDX-License-Identifier: MIT */
/*
 * json.h - a small JSON reader and writer for the CLI (json.c).
 *
 * Enough to read back the statistics files the preload library writes
 * (objects of numbers, an array of flat objects) and to write the merged
 * result: the whole document becomes a tree of struct json_value.
 */
#ifndef USWAP_CLI_JSON_H
#define USWAP_CLI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum json_type {
	JSON_NULL,
	JSON_FALSE,
	JSON_TRUE,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

struct json_value {
	enum json_type type;
	char *text;		/* JSON_STRING: the decoded string;
				   JSON_NUMBER: the number as written */
	uint64_t u;		/* JSON_NUMBER: the value, when is_uint */
	bool is_uint;		/* a whole number from 0 to 2^64 - 1 */
	size_t n;		/* JSON_ARRAY, JSON_OBJECT: number of members */
	char **keys;		/* JSON_OBJECT: member names, in order */
	struct json_value **items;	/* JSON_ARRAY, JSON_OBJECT: members */
};

/*
 * Parse len bytes of text as one JSON value.  Returns 0 and the tree in
 * *out (free with json_free()), or -EINVAL with a one-line message naming
 * the byte offset in err, or -ENOMEM.
 */
int json_parse(const char *text, size_t len, struct json_value **out,
	       char *err, size_t errlen);
void json_free(struct json_value *v);

/* The first member of obj named key, or NULL (also when obj is no object). */
const struct json_value *json_get(const struct json_value *obj,
				  const char *key);

/*
 * The length of the UTF-8 character at s (1 for ASCII, NUL included), or
 * 0 when s holds no valid UTF-8 character there.
 */
size_t utf8_len(const char *s);
/* Is the character of n bytes at s a control character (C0, DEL, C1)? */
bool utf8_is_control(const char *s, size_t n);

/*
 * Write s as a JSON string literal, quotes included: control characters
 * escaped (C1 and DEL too), a byte that is not UTF-8 as U+FFFD.
 */
void json_write_string(FILE *f, const char *s);
/* Write v compactly ({"a": 1, "b": [2]}); numbers as they were read. */
void json_write(FILE *f, const struct json_value *v);

#endif /* USWAP_CLI_JSON_H */
