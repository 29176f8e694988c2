// SPDX-License-Identifier: MIT
/*
 * creds.c - a process whose credentials change leaves its tree first.
 *
 * Servers fork workers as root and have them drop privileges (nginx,
 * Apache, sshd, postfix): setgroups, setgid, setuid.  The worker carries
 * its parent's runtime on after fork, and with it the tree's swap
 * devices, shared maps, budget and key; as another user it must hold none
 * of them (src/detach.c says why and how).  So each of the calls below,
 * when it would change anything, first makes the process leave the tree
 * (preload_leave_tree): its swapped memory is read in, everything of the
 * tree's is let go, and the process runs without uswap from then on (a
 * program it execs later starts a tree of its own, if it loads the
 * preload library).
 *
 *   setuid seteuid setreuid setresuid setfsuid
 *   setgid setegid setregid setresgid setfsgid
 *   setgroups initgroups capset
 *
 * "Would change": an id asked for differs from the current one (-1 asks
 * for none), the group list differs as a set, capability sets differ.
 * A call that then fails (EPERM) leaves the process detached all the
 * same.  A vfork child shares its parent's memory: it only closes uswap's
 * descriptors in its own table, and must exec or exit anyway.
 *
 * Not covered: credentials changed by raw system calls (the C library is
 * bypassed), including libraries that change them so (libcap's psx);
 * user namespaces (unshare, clone).
 */
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdtable.h"

#define EXPORT __attribute__((visibility("default")))

/* preload.c: this process leaves its tree, for good. */
void preload_leave_tree(void);

static struct {
	int (*setuid)(uid_t);
	int (*seteuid)(uid_t);
	int (*setreuid)(uid_t, uid_t);
	int (*setresuid)(uid_t, uid_t, uid_t);
	int (*setgid)(gid_t);
	int (*setegid)(gid_t);
	int (*setregid)(gid_t, gid_t);
	int (*setresgid)(gid_t, gid_t, gid_t);
	int (*setgroups)(size_t, const gid_t *);
	int (*initgroups)(const char *, gid_t);
	int (*setfsuid)(uid_t);
	int (*setfsgid)(gid_t);
} real;

__attribute__((constructor)) static void creds_init(void)
{
	real.setuid = dlsym(RTLD_NEXT, "setuid");
	real.seteuid = dlsym(RTLD_NEXT, "seteuid");
	real.setreuid = dlsym(RTLD_NEXT, "setreuid");
	real.setresuid = dlsym(RTLD_NEXT, "setresuid");
	real.setgid = dlsym(RTLD_NEXT, "setgid");
	real.setegid = dlsym(RTLD_NEXT, "setegid");
	real.setregid = dlsym(RTLD_NEXT, "setregid");
	real.setresgid = dlsym(RTLD_NEXT, "setresgid");
	real.setgroups = dlsym(RTLD_NEXT, "setgroups");
	real.initgroups = dlsym(RTLD_NEXT, "initgroups");
	real.setfsuid = dlsym(RTLD_NEXT, "setfsuid");
	real.setfsgid = dlsym(RTLD_NEXT, "setfsgid");
}

/* The change is coming: leave the tree (or, in a vfork child, let go). */
static void leave(bool changes)
{
	if (!changes)
		return;
	if (fd_in_vfork_child())
		fd_close_all_here();
	else
		preload_leave_tree();
}

#define UNSET	((unsigned)-1)

/*
 * Would setresuid(r, e, s) (UNSET: unchanged) change the current ids?
 * The same for gids.
 */
static bool ids_change(unsigned r, unsigned e, unsigned s,
		       unsigned cr, unsigned ce, unsigned cs)
{
	return (r != UNSET && r != cr) || (e != UNSET && e != ce) ||
	       (s != UNSET && s != cs);
}

static bool uids_change(uid_t r, uid_t e, uid_t s)
{
	uid_t cr, ce, cs;

	return getresuid(&cr, &ce, &cs) || ids_change(r, e, s, cr, ce, cs);
}

static bool gids_change(gid_t r, gid_t e, gid_t s)
{
	gid_t cr, ce, cs;

	return getresgid(&cr, &ce, &cs) || ids_change(r, e, s, cr, ce, cs);
}

/*
 * setreuid(r, e) per setreuid(2): the saved id becomes the new effective
 * one when r is set, or e is set to other than the current real id.
 */
static bool re_change(unsigned r, unsigned e, unsigned cr, unsigned ce,
		      unsigned cs)
{
	unsigned ne = e != UNSET ? e : ce;
	unsigned ns = (r != UNSET || (e != UNSET && e != cr)) ? ne : cs;

	return ids_change(r, e, ns, cr, ce, cs);
}

#define CALL(fn, ...)						\
	(real.fn ? real.fn(__VA_ARGS__) : (errno = ENOSYS, -1))

/*
 * The four setters of one kind of id, x = u or g: setxid, setexid,
 * setrexid and setresxid (setuid() ... setresgid()), each leaving the
 * tree first when the call would change an id of that kind.
 */
#define ID_SETTERS(x, id_t)						\
EXPORT int set##x##id(id_t id)						\
{									\
	leave(x##ids_change(id, id, id));				\
	return CALL(set##x##id, id);					\
}									\
									\
EXPORT int sete##x##id(id_t id)						\
{									\
	leave(x##ids_change(UNSET, id, UNSET));				\
	return CALL(sete##x##id, id);					\
}									\
									\
EXPORT int setre##x##id(id_t r, id_t e)					\
{									\
	id_t cr, ce, cs;						\
									\
	leave(getres##x##id(&cr, &ce, &cs) || re_change(r, e, cr, ce, cs)); \
	return CALL(setre##x##id, r, e);				\
}									\
									\
EXPORT int setres##x##id(id_t r, id_t e, id_t s)			\
{									\
	leave(x##ids_change(r, e, s));					\
	return CALL(setres##x##id, r, e, s);				\
}

ID_SETTERS(u, uid_t)
ID_SETTERS(g, gid_t)

EXPORT int setfsuid(uid_t uid)
{
	/* An invalid id changes nothing and returns the current one. */
	int cur = real.setfsuid ? real.setfsuid((uid_t)-1) : -1;

	leave(cur < 0 || (uid_t)cur != uid);
	return real.setfsuid ? real.setfsuid(uid) : -1;
}

EXPORT int setfsgid(gid_t gid)
{
	int cur = real.setfsgid ? real.setfsgid((gid_t)-1) : -1;

	leave(cur < 0 || (gid_t)cur != gid);
	return real.setfsgid ? real.setfsgid(gid) : -1;
}

static int cmp_gid(const void *a, const void *b)
{
	gid_t x = *(const gid_t *)a, y = *(const gid_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort and drop repeats; the new length. */
static size_t gid_set(gid_t *g, size_t n)
{
	size_t i, k = 0;

	qsort(g, n, sizeof(*g), cmp_gid);
	for (i = 0; i < n; i++)
		if (!k || g[k - 1] != g[i])
			g[k++] = g[i];
	return k;
}

/* Would the supplementary groups become list[0..n)?  true when unsure. */
static bool groups_change(size_t n, const gid_t *list)
{
	gid_t *cur, *want;
	int ncur = getgroups(0, NULL);
	bool change = true;
	size_t a, b;

	if (ncur < 0 || (n && !list))
		return true;
	cur = malloc(((size_t)ncur + n + 1) * sizeof(gid_t));
	if (!cur)
		return true;
	want = cur + ncur;
	if (getgroups(ncur, cur) == ncur) {
		if (n)
			memcpy(want, list, n * sizeof(gid_t));
		a = gid_set(cur, (size_t)ncur);
		b = gid_set(want, n);
		change = a != b || memcmp(cur, want, a * sizeof(gid_t));
	}
	free(cur);
	return change;
}

EXPORT int setgroups(size_t n, const gid_t *list)
{
	if (fd_in_vfork_child())
		leave(true);
	else
		leave(groups_change(n, list));
	return CALL(setgroups, n, list);
}

EXPORT int initgroups(const char *user, gid_t group)
{
	bool change = true;
	int n = 0;

	if (!fd_in_vfork_child() && user) {
		/* The list initgroups would set: the user's, and group. */
		getgrouplist(user, group, NULL, &n);
		if (n > 0) {
			gid_t *g = malloc((size_t)n * sizeof(gid_t));

			if (g && getgrouplist(user, group, g, &n) >= 0)
				change = groups_change((size_t)n, g);
			free(g);
		}
	}
	leave(change);
	return CALL(initgroups, user, group);
}

/* The C library declares it in sys/capability.h (libcap's), not here. */
int capset(cap_user_header_t hdr, const cap_user_data_t data);

EXPORT int capset(cap_user_header_t hdr, const cap_user_data_t data)
{
	struct __user_cap_header_struct h;
	struct __user_cap_data_struct cur[2];
	unsigned words = 2;
	bool change = true;

	if (hdr && data) {
		h = *hdr;
		if (h.version == _LINUX_CAPABILITY_VERSION_1)
			words = 1;
		if (!syscall(SYS_capget, &h, cur))
			change = memcmp(cur, data, words * sizeof(cur[0])) != 0;
	}
	leave(change);
	return (int)syscall(SYS_capset, hdr, data);
}
