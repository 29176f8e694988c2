/* SPDX-License-Identifier: MIT */
/*
 * fuzzlib.h - what the fuzz targets share: a check that aborts (libFuzzer
 * and the corpus replay both report an abort as a failure, with the line).
 */
#ifndef USWAP_FUZZLIB_H
#define USWAP_FUZZLIB_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

#endif
