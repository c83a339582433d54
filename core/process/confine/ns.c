/*
 * The namespaces and the seccomp filter of media-core-confine (see confine.c for the order).
 * Why namespaces: Landlock's missing execute right governs execve, not mmap(PROT_EXEC), so a
 * shared object a client uploaded could still be dlopen'ed (ffmpeg's ladspa, lv2 and frei0r
 * filters); a noexec mount makes the kernel refuse any executable mapping of its files. And a
 * parent-death signal is not inherited across fork: only a pid namespace takes everything a child
 * started with it. The syscall and flag values are the kernel's uapi ones, from the libc headers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include "ns.h"

static void write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) die(126, "open", path);
  ssize_t n = write(fd, text, strlen(text));
  if (n != (ssize_t)strlen(text)) die(126, "write", path);
  close(fd);
}

/* A mount namespace (and a pid namespace for the children): directly with privilege, else inside a
 * user namespace that maps only our own uid and gid (nothing gained: the same ids outside). */
static void enter_namespaces(void) {
  int flags = CLONE_NEWNS | CLONE_NEWPID;
  if (unshare(flags) == 0) return;
  if (errno != EPERM) die(126, "unshare", NULL);
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (unshare(flags | CLONE_NEWUSER) < 0) die(126, "unshare (user namespace)", NULL);
  char map[64];
  write_file("/proc/self/setgroups", "deny");
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
  write_file("/proc/self/uid_map", map);
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
  write_file("/proc/self/gid_map", map);
}

/* The mount at `dir` again, noexec nosuid nodev, keeping the flags it has (a user namespace may not clear them). */
static void remount_noexec(const char *dir) {
  struct statvfs sv;
  if (statvfs(dir, &sv) < 0) die(126, "statvfs", dir);
  unsigned long fl = MS_BIND | MS_REMOUNT | MS_NOEXEC | MS_NOSUID | MS_NODEV;
  if (sv.f_flag & ST_RDONLY) fl |= MS_RDONLY;
  if (sv.f_flag & ST_NOATIME) fl |= MS_NOATIME;
  if (sv.f_flag & ST_NODIRATIME) fl |= MS_NODIRATIME;
  if (sv.f_flag & ST_RELATIME) fl |= MS_RELATIME;
  if (mount(NULL, dir, NULL, fl, NULL) < 0) die(126, "remount noexec", dir);
}

static int beneath(const char *parent, const char *p) {
  size_t n = strlen(parent);
  if (strncmp(parent, p, n) != 0) return 0;
  return p[n] == '\0' || p[n] == '/' || (n == 1 && parent[0] == '/');
}

static void mount_noexec(const char *path) {
  struct stat st;
  if (lstat(path, &st) < 0) {
    if (errno == ENOENT || errno == ENOTDIR || errno == EACCES) return;
    die(126, "stat", path);
  }
  if (S_ISLNK(st.st_mode)) return;
  if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0) die(126, "bind mount", path);
  FILE *f = setmntent("/proc/self/mounts", "re");
  if (!f) die(126, "open", "/proc/self/mounts");
  /* collected first: the table changes as we remount */
  char **dirs = NULL;
  size_t n = 0;
  struct mntent *m;
  while ((m = getmntent(f)) != NULL) {
    if (!beneath(path, m->mnt_dir)) continue;
    char **d = realloc(dirs, (n + 1) * sizeof *dirs);
    if (!d || !(d[n] = strdup(m->mnt_dir))) die(126, "memory", NULL);
    dirs = d;
    n++;
  }
  endmntent(f);
  for (size_t i = 0; i < n; i++) {
    remount_noexec(dirs[i]);
    free(dirs[i]);
  }
  free(dirs);
}

void ns_enter(char *const *rw, int nrw) {
  enter_namespaces();
  /* nothing we mount here is seen outside */
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) die(126, "make / private", NULL);
  for (int i = 0; i < nrw; i++) mount_noexec(rw[i]);
}

static void close_from_to(unsigned first, unsigned last) {
  if (first > last) return;
  /* close_range: Linux 5.9+; a loop where the kernel lacks it */
  if (syscall(SYS_close_range, first, last, 0U) == 0) return;
  for (unsigned fd = first; fd <= last && fd < 4096; fd++) close((int)fd);
}

/* stdin, stdout and stderr on /dev/null, every other descriptor closed but `a` and `b` (a < b; -1
 * for none): the program alone holds the service's pipes */
static void let_go(int a, int b) {
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3; fd++) {
    if (null >= 0) dup2(null, fd);
    else close(fd);
  }
  unsigned from = 3;
  if (a >= 3) { close_from_to(from, (unsigned)a - 1); from = (unsigned)a + 1; }
  if (b >= 3) { close_from_to(from, (unsigned)b - 1); from = (unsigned)b + 1; }
  close_from_to(from, ~0U);
}

/* Only argv[0] left in what /proc/<pid>/cmdline shows: the program's arguments are not repeated. */
static char **args_start, **args_end;
static void scrub_args(void) {
  if (args_start < args_end) memset(*args_start, 0, (size_t)(args_end[-1] + strlen(args_end[-1]) - *args_start));
}

static const int FORWARDED[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCONT, SIGWINCH };
#define NFORWARDED (int)(sizeof FORWARDED / sizeof FORWARDED[0])
static volatile pid_t program_group = 0;

static void forward(int sig) {
  int saved = errno;
  if (program_group > 0) kill(-program_group, sig);
  errno = saved;
}

/* The pid namespace's init: starts the program as its pid 2, reaps orphans, and when the program
 * ended tells the wrapper how (its wait status) and exits: the kernel then kills what is left. */
static void init_main(int status_fd, int alive_fd, int ready_fd, char **prog, void (*confine)(void *), void *arg) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) _exit(126);
  /* the wrapper holds the other end of this pipe: a hang-up means it died before the line above */
  struct pollfd pfd = { .fd = alive_fd, .events = POLLIN };
  if (poll(&pfd, 1, 0) != 0) _exit(126);
  /* a /proc of this pid namespace only: the service's other children (their command lines, with
   * the run credential of their outputs) are not in it. Mounted before Landlock, which forbids
   * mounts; where the kernel refuses it (an unprivileged user namespace under a /proc with masked
   * paths) the host's stays, as before. */
  mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
  confine(arg);
  /* a group of its own: the wrapper forwards signals to it, so the program gets each once */
  setpgid(0, 0);
  pid_t pid = fork();
  if (pid < 0) _exit(126);
  if (pid == 0) {
    close(status_fd);
    close(alive_fd);
    close(ready_fd);
    execvp(prog[0], prog);
    die(errno == ENOENT ? 127 : 126, "exec", prog[0]);
  }
  /* the program is in the group: the wrapper may forward signals now (an init ignores the ones it
   * has no handler for, so a SIGTERM forwarded while only the init was there was lost) */
  if (write(ready_fd, "1", 1) != 1) _exit(126);
  close(ready_fd);
  close(alive_fd);
  scrub_args();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_IGN;
  for (int sig = 1; sig < NSIG; sig++) if (sig != SIGKILL && sig != SIGSTOP && sig != SIGCHLD) sigaction(sig, &sa, NULL);
  let_go(status_fd, -1);
  for (;;) {
    int st = 0;
    pid_t r = waitpid(-1, &st, 0);
    if (r == pid) {
      if (write(status_fd, &st, sizeof st) != (ssize_t)sizeof st) _exit(126);
      _exit(0);
    }
    if (r < 0 && errno != EINTR) _exit(126);
  }
}

/* Ends the wrapper the way the program ended (its exit code, or the signal that killed it). */
__attribute__((noreturn)) static void end_like(int st) {
  if (WIFEXITED(st)) exit(WEXITSTATUS(st));
  int sig = WIFSIGNALED(st) ? WTERMSIG(st) : SIGKILL;
  struct rlimit none = { 0, 0 };
  setrlimit(RLIMIT_CORE, &none);
  signal(sig, SIG_DFL);
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_UNBLOCK, &all, NULL);
  raise(sig);
  exit(128 + sig);
}

void ns_run(int argc, char **argv, char **prog, void (*confine)(void *), void *arg) {
  args_start = argv + 1;
  args_end = argv + argc;
  int status[2], alive[2], ready[2];
  if (pipe2(status, O_CLOEXEC) < 0 || pipe2(alive, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0) die(126, "pipe", NULL);
  /* the signals to forward are held until the init's group exists */
  sigset_t fw, old;
  sigemptyset(&fw);
  for (int i = 0; i < NFORWARDED; i++) sigaddset(&fw, FORWARDED[i]);
  sigprocmask(SIG_BLOCK, &fw, &old);
  pid_t init = fork();
  if (init < 0) die(126, "fork", NULL);
  if (init == 0) {
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(status[0]);
    close(alive[1]);
    close(ready[0]);
    init_main(status[1], alive[0], ready[1], prog, confine, arg);
  }
  close(status[1]);
  close(alive[0]);
  close(ready[1]);
  /* the init makes this group itself too: whichever runs first, the group exists before a forward */
  setpgid(init, init);
  /* from here on it waits and signals its own group: nothing a capability is needed for */
  drop_capabilities();
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) die(126, "PR_SET_NO_NEW_PRIVS", NULL);
  scrub_args();
  program_group = init;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = forward;
  sa.sa_flags = SA_RESTART;
  for (int i = 0; i < NFORWARDED; i++) sigaction(FORWARDED[i], &sa, NULL);
  /* the signals stay held (pending) until the program is in the init's group: the init's /proc and
   * confinement come first now, and what reached the group while only the init was in it was lost */
  char one;
  ssize_t r;
  do r = read(ready[0], &one, 1); while (r < 0 && errno == EINTR);
  close(ready[0]);
  sigprocmask(SIG_SETMASK, &old, NULL);
  /* alive[1] stays open until the wrapper ends (the init's check); everything else goes */
  let_go(status[0] < alive[1] ? status[0] : alive[1], status[0] < alive[1] ? alive[1] : status[0]);
  int st = 0;
  ssize_t n;
  do n = read(status[0], &st, sizeof st); while (n < 0 && errno == EINTR);
  /* no word from the init: it was killed, and the program with it */
  if (n != (ssize_t)sizeof st) st = SIGKILL;
  end_like(st);
}

int ns_probe(void) {
  pid_t pid = fork();
  if (pid == 0) {
    char *root[] = { "/" };
    ns_enter(root, 1);
    pid_t inner = fork();
    if (inner == 0) _exit(getpid() == 1 ? 0 : 1);
    int st = 0;
    if (inner < 0 || waitpid(inner, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) _exit(1);
    _exit(0);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) return 0;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

#if defined(__x86_64__)
#define ARCH_NR AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH_NR AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define ARCH_NR AUDIT_ARCH_I386
#endif

void no_links(void) {
#ifdef ARCH_NR
  unsigned nrs[4];
  unsigned n = 0;
  nrs[n++] = __NR_linkat;
  nrs[n++] = __NR_symlinkat;
#ifdef __NR_link
  nrs[n++] = __NR_link;
#endif
#ifdef __NR_symlink
  nrs[n++] = __NR_symlink;
#endif
  struct sock_filter f[16];
  unsigned k = 0;
  f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  /* another ABI (i386 or x32 on x86_64) has other numbers: refused as a whole */
  f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH_NR, 1, 0);
  f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
  f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  unsigned checks = n;
#ifdef __x86_64__
  checks++;
  f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, (unsigned char)checks, 0);
#endif
  for (unsigned i = 0; i < n; i++, k++) {
    unsigned left = checks - (k - 4);
    f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nrs[i], (unsigned char)left, 0);
  }
  f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
  struct sock_fprog prog = { .len = (unsigned short)k, .filter = f };
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) die(126, "seccomp", NULL);
#endif
}
