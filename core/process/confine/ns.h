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

/* Runs the program in the pid namespace and never returns. The caller (the pid the service knows)
 * forks the namespace's init, which starts the program as its pid 2 in a process group of its own;
 * the caller forwards the signals a program is stopped with to that group and ends as the program
 * ended (exit code or signal). The init dies with the caller (PR_SET_PDEATHSIG) and leaves when the
 * program ended: the kernel then kills whatever is left in the namespace (setsid and double forks
 * included). Threads cannot be made by a process whose children's pid namespace is another one,
 * which is why the program is not the caller itself. The caller's and the init's command lines keep
 * only argv[0]. Call after ns_enter. The init mounts a /proc of the namespace (where the kernel
 * lets it), then calls `confine(arg)` (Landlock, capabilities, seccomp: a confined process may not
 * mount), then starts the program. The caller, which only waits and forwards signals from then on,
 * drops every capability too (a root service's wrapper kept them while its program ran). */
void ns_run(int argc, char **argv, char **prog, void (*confine)(void *), void *arg) __attribute__((noreturn));

/* Every capability gone for good (bounding set, ambient, effective, permitted, inheritable). */
void drop_capabilities(void);

/* A seccomp filter: link, linkat, symlink and symlinkat fail with EPERM. Needs no_new_privs. */
void no_links(void);

#endif
