#ifndef OLIVARES_TESTS_SWEEP_H
#define OLIVARES_TESTS_SWEEP_H
/**
 * What a failed containment test leaves behind, swept at the next run's
 * start (tests/unit/test_namespaces.c, tests/unit/test_gvisor.c).
 *
 * A Check assertion that fails ends the forked test at once, before its
 * clean-up: its bind directory (sometimes with a tmpfs still mounted
 * below it) or its secret file stays. Each such path is named
 * PREFIX PID "-" REST, PID the decimal pid of the process that made it
 * (the forked test), so that a later run can tell a stale one (its maker
 * is gone) from one of a run going on at the same time (its maker lives).
 */
#include <sys/types.h>

/**
 * Make "DIR/PREFIX" PID "-XXXXXX" (PID: this process's) a new directory
 * (mkdtemp, mode 0700) and write its path to path (n bytes). Returns 0,
 * or -1 with errno (ENAMETOOLONG when it does not fit).
 */
int sweep_mkdtemp(char *path, size_t n, const char *dir, const char *prefix);

/**
 * Remove every entry of dir whose name is PREFIX PID "-" REST with no
 * process PID alive (kill(PID, 0) answers ESRCH) that is a directory or
 * regular file of this process's effective uid, writable by no group or
 * other (what sweep_mkdtemp makes: dir is world-writable, and another
 * user's entry could lead a walk by path elsewhere): first every mount at or
 * below it (umount2 MNT_DETACH, as /proc/self/mountinfo lists them,
 * deepest first), then the entry itself and whatever is under it (never
 * crossing into a mount). Entries of a living PID, of another user (or
 * group- or world-writable, or of another type), and names of another
 * shape, are left alone. Needs the rights to unmount (root) when a
 * stale entry has a mount. Returns how many entries were removed, or -1
 * when dir cannot be read or a stale entry could not be removed whole.
 */
int sweep_stale(const char *dir, const char *prefix);

#endif
