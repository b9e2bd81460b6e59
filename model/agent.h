#ifndef OLIVARES_MODEL_AGENT_H
#define OLIVARES_MODEL_AGENT_H
/**
 * Agent programs (pure rules, no I/O): the names a variant may give one,
 * the interpreter a script's "#!" line names, and whether a path is seen
 * inside the jail of the OS-level backends. The jail (runner/jail.c,
 * runner/backend_gvisor.c) holds only the read-only binds (spec "binds",
 * default ["/usr"]) at their host paths, /bin, /lib, /lib64 and /sbin as
 * symlinks into /usr unless a bind takes that very path, the agent at
 * /agent, a /dev of five devices, /proc and /tmp; the agent's PATH is
 * MODEL_AGENT_JAIL_PATH. The caller brings the I/O as a probe.
 */
#include <jansson.h>
#include <stddef.h>

/** The longest agent program name: [A-Za-z0-9][A-Za-z0-9._-]{0,63}. */
#define MODEL_AGENT_NAME_MAX 64
/** PATH of the agent inside the jail (both OS-level backends). */
#define MODEL_AGENT_JAIL_PATH "/usr/bin:/bin"
/** The bytes of a "#!" line the kernel reads (BINPRM_BUF_SIZE). */
#define MODEL_AGENT_HEAD_BYTES 256

/** 1 when v is a name a variant can give an agent program (so "." and
 * ".." never match, nor does anything with a '/'), 0 otherwise. */
int model_agent_name_ok(const char *v);

/** A script's interpreter, as the kernel reads its "#!" line. */
struct model_interp {
	char path[MODEL_AGENT_HEAD_BYTES]; /* the interpreter as written */
	char arg[MODEL_AGENT_HEAD_BYTES];  /* the rest of the line, blanks trimmed,
	                                    * one argument as the kernel passes it
	                                    * ("" when none) */
};

/**
 * Parse the first n bytes of a program (head, at most
 * MODEL_AGENT_HEAD_BYTES are read) into *out. Returns 1 for a "#!" line
 * naming an interpreter, 0 when the file does not start with "#!" (a
 * binary: *out emptied), -1 for a "#!" line with no interpreter or none
 * that ends within the bytes read (the kernel refuses it: ENOEXEC).
 */
int model_interp_parse(const char *head, size_t n, struct model_interp *out);

/**
 * The host side of a path seen inside the jail: returns 1 and writes
 * into real (n bytes) the canonical host path when host_path exists and
 * may be executed there, 0 when it does not. ctx is the caller's.
 */
typedef int (*model_path_probe)(void *ctx, const char *host_path, char *real, size_t n);

/**
 * Whether jail_path (absolute; a relative one is taken from "/", the
 * agent's working directory) names an executable file inside the jail of
 * binds (an array of absolute host paths, borrowed; NULL: ["/usr"]):
 * it must lie under a bind once /bin, /lib, /lib64 and /sbin are followed
 * into /usr, exist there (probe), and its canonical path (symlinks
 * followed) must lie under a bind too. Returns 1 or 0.
 */
int model_jail_sees(const char *jail_path, json_t *binds, model_path_probe probe, void *ctx);

/** Where an interpreter stands with respect to the jail. */
enum model_interp_jail {
	MODEL_INTERP_IN_JAIL = 1,  /* it (and the program env looks up) is there */
	MODEL_INTERP_MISSING = 0,  /* the interpreter is not in the jail */
	MODEL_INTERP_LOOKUP = -1,  /* env is there, the program it looks up
	                            * in MODEL_AGENT_JAIL_PATH is not */
	MODEL_INTERP_UNKNOWN = -2, /* env is there, with options this check
	                            * does not follow (anything but -S) */
};

/**
 * Check interpreter ip against the jail of binds. An interpreter whose
 * last path component is "env" with an argument also has that argument's
 * program looked up (a bare name in each directory of
 * MODEL_AGENT_JAIL_PATH, a path as is; "-S words" takes the first word):
 * *resolved (n bytes, may be NULL) gets the jail path found, "" when
 * none. Returns an enum model_interp_jail.
 */
int model_interp_in_jail(const struct model_interp *ip, json_t *binds, model_path_probe probe,
                         void *ctx, char *resolved, size_t n);

/**
 * The reason a run of agent program name fails, or a submit is refused,
 * when model_interp_in_jail answered verdict (MODEL_INTERP_MISSING or
 * MODEL_INTERP_LOOKUP; anything else writes ""), into buf (n bytes):
 * "agent program NAME: its interpreter PATH is not inside the jail (add
 * its directory to [runner] binds)", or for env "agent program NAME: its
 * interpreter PATH finds no PROGRAM inside the jail (PATH /usr/bin:/bin;
 * add its directory to [runner] binds)".
 */
void model_interp_reason(const char *name, const struct model_interp *ip, int verdict, char *buf,
                         size_t n);

#endif
