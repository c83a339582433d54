/* media-core-confine's namespaces and seccomp filter (ns.c); confine.c runs them in its order. */
#ifndef MEDIA_CORE_CONFINE_NS_H
#define MEDIA_CORE_CONFINE_NS_H

/* Exits with code 126 after printing what failed (confine.c). */
void die(int code, const char *what, const char *arg);

/* 1 when a private mount namespace and a pid namespace can be entered here, else 0 (a throwaway child tries). */
int ns_probe(void);

/* Enters a private mount namespace (in a user namespace of the caller's own ids when it has no
 * privilege) and a pid namespace for its future children, and mounts every path of `rw` again
 * noexec, nosuid and nodev, the mounts beneath it too. Missing paths are skipped. */
void ns_enter(char *const *rw, int nrw);

/* Forks the pid namespace's init: it reaps orphans, ignores every signal it can, and dies with the
 * caller (PR_SET_PDEATHSIG), i.e. with the program the caller execs into; the kernel then kills
 * whatever is left in the namespace. Call after ns_enter, just before the exec. The init's command
 * line keeps only argv[0] (the program's arguments are not repeated in a second process). */
void ns_fork_init(int argc, char **argv);

/* A seccomp filter: link, linkat, symlink and symlinkat fail with EPERM. Needs no_new_privs. */
void no_links(void);

#endif
