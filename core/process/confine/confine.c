/*
 * media-core-confine: runs one program confined by the kernel, then gets out of the way (exec).
 *
 *   media-core-confine --ppid PID [--ns] [--tasks FILE] [--ro|--rd|--rw|--wo|--dev|--ls|--nx PATH]... -- PROGRAM [ARG]...
 *   media-core-confine --probe          prints "landlock <abi> ns <0|1>" (0: not available) and exits 0
 *
 * In order, before the exec:
 *  1. PR_SET_PDEATHSIG SIGKILL: the program dies with the service, even after a kill -9 of it; if the
 *     service (--ppid) is already gone, nothing runs.
 *  1b. With --tasks: joins the cgroup whose `cgroup.procs` FILE is (the service made it with a `pids.max`):
 *     the program and everything it starts, threads included, count against that bound. Fails (126)
 *     when it cannot.
 *  2. With --ns (ns.c): a private mount namespace where every --rw and --nx path is mounted again noexec,
 *     nosuid, nodev (mapping a file from there executable fails, so nothing a client wrote can be
 *     dlopen'ed), and a new pid namespace for whatever the program starts: its first process, a tiny
 *     init forked here, dies with the program, and the kernel then kills everything in it
 *     (grandchildren that fork, setsid or double-fork included). As root directly, as an ordinary
 *     user inside a user namespace that maps only the user's own uid and gid. The init mounts a /proc
 *     of the namespace (the service's other children and the service are not in it), then takes steps
 *     3 to 5 itself before it starts the program (Landlock forbids mounts); this wrapper waits outside.
 *  3. Landlock (kernel 5.13+): reading only beneath the --ro paths (the service passes everything but
 *     its secrets), writing only beneath the --rw paths (no links made there; an --rw, --rd or --wo
 *     path with a link anywhere on it grants nothing: the service passes real paths), devices (--dev) read,
 *     written and ioctl'd, folders (--ls) listed, --rd paths read but never executed (not even
 *     where namespaces are missing), --wo paths written but not read (mounted noexec as --rw); an --nx path gets no grant of its own (a folder of
 *     client files of which only some folders are granted, --ro or --rw, stays noexec as a whole);
 *     from ABI 6 no signals to and no abstract sockets of processes outside the sandbox (the service).
 *  4. No capabilities: a service running as root starts its children as root without any capability.
 *  5. seccomp: link, linkat, symlink and symlinkat fail with EPERM (no hard or symbolic link anywhere).
 *  6. execvp. Any failure before it exits 126 (127 when the program is not found): a child the
 *     service asked to confine never runs less confined than asked.
 * The syscall numbers and flags are the kernel's uapi values, spelled out so that old headers build it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ns.h"

#define SYS_OPENAT2 437
#define RESOLVE_NO_LINKS 0x04
struct open_how_attr { uint64_t flags, mode, resolve; };
#define SYS_LL_CREATE 444
#define SYS_LL_ADD 445
#define SYS_LL_RESTRICT 446
#define LL_CREATE_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

#define FS_EXECUTE (1ULL << 0)
#define FS_WRITE_FILE (1ULL << 1)
#define FS_READ_FILE (1ULL << 2)
#define FS_READ_DIR (1ULL << 3)
#define FS_REMOVE_DIR (1ULL << 4)
#define FS_REMOVE_FILE (1ULL << 5)
#define FS_MAKE_CHAR (1ULL << 6)
#define FS_MAKE_DIR (1ULL << 7)
#define FS_MAKE_REG (1ULL << 8)
#define FS_MAKE_SOCK (1ULL << 9)
#define FS_MAKE_FIFO (1ULL << 10)
#define FS_MAKE_BLOCK (1ULL << 11)
#define FS_MAKE_SYM (1ULL << 12)
#define FS_REFER (1ULL << 13)
#define FS_TRUNCATE (1ULL << 14)
#define FS_IOCTL_DEV (1ULL << 15)
#define SCOPE_ABSTRACT_UNIX (1ULL << 0)
#define SCOPE_SIGNAL (1ULL << 1)

/* rights that only make sense on directories: a rule on a file must not carry them */
#define FS_DIR_ONLY (FS_READ_DIR | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_CHAR | FS_MAKE_DIR | FS_MAKE_REG | \
  FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM | FS_REFER)
#define RIGHTS_RO (FS_EXECUTE | FS_READ_FILE | FS_READ_DIR)
/* no execute where the child can write (W^X), no device nodes */
/* no symbolic links either: a link planted in a root could lead the service's file door elsewhere */
#define RIGHTS_RW (FS_WRITE_FILE | FS_READ_FILE | FS_READ_DIR | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_DIR | \
  FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_REFER | FS_TRUNCATE)
#define RIGHTS_DEV (FS_READ_FILE | FS_WRITE_FILE | FS_READ_DIR | FS_TRUNCATE | FS_IOCTL_DEV)
/* names only: ffmpeg lists /dev to find capture devices */
#define RIGHTS_LS FS_READ_DIR
/* client files a child may read but not run (a user's folders to read); to write but not read */
#define RIGHTS_RD (FS_READ_FILE | FS_READ_DIR)
#define RIGHTS_WO (RIGHTS_RW & ~(FS_READ_FILE | FS_READ_DIR))

struct ruleset_attr { uint64_t handled_access_fs; uint64_t handled_access_net; uint64_t scoped; };
struct path_beneath_attr { uint64_t allowed_access; int32_t parent_fd; } __attribute__((packed));

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

void die(int code, const char *what, const char *arg) {
  fprintf(stderr, "media-core-confine: %s%s%s: %s\n", what, arg ? " " : "", arg ? arg : "", strerror(errno));
  exit(code);
}

static int landlock_abi(void) {
  long abi = syscall(SYS_LL_CREATE, NULL, 0, LL_CREATE_VERSION);
  return abi < 0 ? 0 : (int)abi;
}

/* The ABI, or 0 when a sandbox cannot really be entered here (a seccomp filter may refuse it). */
static int probe(void) {
  int abi = landlock_abi();
  if (abi < 1) return 0;
  pid_t pid = fork();
  if (pid == 0) {
    uint64_t fs = FS_WRITE_FILE;
    int rs = (int)syscall(SYS_LL_CREATE, &fs, sizeof fs, 0);
    if (rs < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(SYS_LL_RESTRICT, rs, 0) < 0) _exit(1);
    _exit(0);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 0;
  return abi;
}

/* every right the running kernel knows: what is handled and not granted is denied */
static uint64_t handled_fs(int abi) {
  uint64_t fs = (FS_MAKE_SYM << 1) - 1;
  if (abi >= 2) fs |= FS_REFER;
  if (abi >= 3) fs |= FS_TRUNCATE;
  if (abi >= 5) fs |= FS_IOCTL_DEV;
  return fs;
}

/* How a rule's path is opened: following links, not following its last component, or with no link anywhere on the way. */
enum follow { FOLLOW, NOFOLLOW_LAST, NO_LINKS };

/*
 * The descriptor the rule is made on. NO_LINKS (the service passes real paths for --rw, --wo, --rd):
 * a link met anywhere on the way fails (ELOOP), so a folder swapped for a link after the service
 * resolved the path grants nothing (openat2, kernel 5.6+, below Landlock's 5.13; where a filter
 * refuses openat2, the last component at least is not followed).
 */
static int open_rule_path(const char *path, enum follow follow) {
  if (follow == NO_LINKS) {
    struct open_how_attr how = { .flags = O_PATH | O_CLOEXEC, .mode = 0, .resolve = RESOLVE_NO_LINKS };
    int fd = (int)syscall(SYS_OPENAT2, AT_FDCWD, path, &how, sizeof how);
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return fd;
    follow = NOFOLLOW_LAST;
  }
  return open(path, O_PATH | O_CLOEXEC | (follow == NOFOLLOW_LAST ? O_NOFOLLOW : 0));
}

/* A missing path (or one through a link, for NO_LINKS) is skipped (it cannot be reached either); any other failure stops the start. */
static void add_rule(int ruleset, const char *path, uint64_t rights, uint64_t handled, enum follow follow) {
  int fd = open_rule_path(path, follow);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP || errno == EACCES) return;
    die(126, "open", path);
  }
  struct stat st;
  if (fstat(fd, &st) < 0) die(126, "stat", path);
  if (S_ISLNK(st.st_mode)) { close(fd); return; }
  struct path_beneath_attr attr = { .allowed_access = rights & handled, .parent_fd = fd };
  if (!S_ISDIR(st.st_mode)) attr.allowed_access &= ~FS_DIR_ONLY;
  if (attr.allowed_access && syscall(SYS_LL_ADD, ruleset, LL_RULE_PATH_BENEATH, &attr, 0) < 0) die(126, "landlock_add_rule", path);
  close(fd);
}

void drop_capabilities(void) {
  /* the bounding set caps what a root exec regains; needs CAP_SETPCAP, which only root has here */
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  for (int cap = 0; cap <= 63; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno == EINVAL) break;
  }
  struct { uint32_t version; int pid; } hdr = { 0x20080522, 0 };
  struct { uint32_t effective, permitted, inheritable; } data[2] = { { 0, 0, 0 }, { 0, 0, 0 } };
  if (syscall(SYS_capset, &hdr, data) < 0 && errno != EPERM) die(126, "capset", NULL);
}

/* The rules of the command line (the options before `--`). */
struct rules { int argc; char **argv; int end; };

/* Landlock with the rules, no new privileges, no capabilities, no links: steps 3 to 5. */
static void confine_self(void *arg) {
  const struct rules *r = arg;
  int abi = landlock_abi();
  if (abi < 1) { errno = ENOSYS; die(126, "landlock", NULL); }
  uint64_t handled = handled_fs(abi);
  struct ruleset_attr ra = { .handled_access_fs = handled, .handled_access_net = 0,
    .scoped = abi >= 6 ? (SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL) : 0 };
  size_t size = abi >= 6 ? sizeof ra : 2 * sizeof(uint64_t);
  if (abi < 4) size = sizeof(uint64_t);
  int ruleset = (int)syscall(SYS_LL_CREATE, &ra, size, 0);
  if (ruleset < 0) die(126, "landlock_create_ruleset", NULL);
  for (int j = 1; j < r->end; j += 2) {
    if (strcmp(r->argv[j], "--ns") == 0) { j--; continue; }
    const char *opt = r->argv[j], *path = r->argv[j + 1];
    if (strcmp(opt, "--ro") == 0) add_rule(ruleset, path, RIGHTS_RO, handled, NOFOLLOW_LAST);
    else if (strcmp(opt, "--rw") == 0) add_rule(ruleset, path, RIGHTS_RW, handled, NO_LINKS);
    else if (strcmp(opt, "--dev") == 0) add_rule(ruleset, path, RIGHTS_DEV, handled, FOLLOW);
    else if (strcmp(opt, "--ls") == 0) add_rule(ruleset, path, RIGHTS_LS, handled, FOLLOW);
    else if (strcmp(opt, "--rd") == 0) add_rule(ruleset, path, RIGHTS_RD, handled, NO_LINKS);
    else if (strcmp(opt, "--wo") == 0) add_rule(ruleset, path, RIGHTS_WO, handled, NO_LINKS);
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) die(126, "PR_SET_NO_NEW_PRIVS", NULL);
  if (syscall(SYS_LL_RESTRICT, ruleset, 0) < 0) die(126, "landlock_restrict_self", NULL);
  close(ruleset);
  drop_capabilities();
  no_links();
}

/* Step 1b: this process into the cgroup of `procs` (its cgroup.procs); what it starts inherits it. */
static void join_cgroup(const char *procs) {
  int fd = open(procs, O_WRONLY | O_CLOEXEC);
  if (fd < 0) die(126, "cgroup", procs);
  char pid[24];
  int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
  if (write(fd, pid, (size_t)n) != n) die(126, "cgroup", procs);
  close(fd);
}

static int usage(void) {
  fprintf(stderr, "usage: media-core-confine --ppid PID [--ns] [--tasks FILE] [--ro|--rd|--rw|--wo|--dev|--ls|--nx PATH]... -- PROGRAM [ARG]...\n");
  return 126;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--probe") == 0) {
    int abi = probe();
    printf("landlock %d ns %d\n", abi, abi > 0 ? ns_probe() : 0);
    return 0;
  }
  pid_t ppid = 0;
  const char *tasks = NULL;
  int ns = 0, nrw = 0;
  char **rw = calloc((size_t)argc, sizeof *rw);
  if (!rw) die(126, "memory", NULL);
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; i += 2) {
    if (strcmp(argv[i], "--ns") == 0) { ns = 1; i--; continue; }
    if (i + 1 >= argc) return usage();
    if (strcmp(argv[i], "--ppid") == 0) ppid = (pid_t)atol(argv[i + 1]);
    else if (strcmp(argv[i], "--tasks") == 0) tasks = argv[i + 1];
    else if (strcmp(argv[i], "--rw") == 0 || strcmp(argv[i], "--nx") == 0 || strcmp(argv[i], "--wo") == 0) rw[nrw++] = argv[i + 1];
    else if (strcmp(argv[i], "--ro") != 0 && strcmp(argv[i], "--dev") != 0 && strcmp(argv[i], "--ls") != 0 && strcmp(argv[i], "--rd") != 0) {
      fprintf(stderr, "media-core-confine: unknown option %s\n", argv[i]);
      return 126;
    }
  }
  if (i >= argc || i + 1 >= argc || ppid <= 0) return usage();
  int end = i;
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) die(126, "PR_SET_PDEATHSIG", NULL);
  /* the service may have died between its fork and the line above */
  if (getppid() != ppid) return 126;
  if (tasks) join_cgroup(tasks);
  if (ns) ns_enter(rw, nrw);

  struct rules r = { argc, argv, end };
  /* with --ns the init of the pid namespace confines itself and the program (after its /proc) */
  if (ns) ns_run(argc, argv, &argv[end + 1], confine_self, &r);
  confine_self(&r);
  execvp(argv[end + 1], &argv[end + 1]);
  die(errno == ENOENT ? 127 : 126, "exec", argv[end + 1]);
  return 126;
}
