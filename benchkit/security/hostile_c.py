"""C sources of the hostile harnesses (``@NAME@`` placeholders are filled by the lab).

Each runs its attack once, on the first input, and reports what happened on stderr; the
probes in :mod:`benchkit.security.hostile_harnesses` judge the escape from outside, never by
trusting what the harness printed.
"""

from __future__ import annotations

PRELUDE = r"""
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "probe.h"

extern char **environ;
static int probe_done;

static void heartbeat_forever(int fd) {
  for (;;) {
    if (write(fd, "x", 1) < 0) _exit(1);
    usleep(50000);
  }
}

static int connect_to(int family, const void *addr, socklen_t len, const char *what) {
  int fd = socket(family, SOCK_STREAM, 0);
  int rc = fd < 0 ? -1 : connect(fd, (const struct sockaddr *)addr, len);
  fprintf(stderr, "connect %s: %s\n", what, rc == 0 ? "connected" : strerror(errno));
  if (fd >= 0) close(fd);
  return rc;
}
"""


def _harness(body: str) -> str:
    return (
        PRELUDE
        + "\nint LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n"
        + "  probe_sum(data, size);\n  if (probe_done++) return 0;\n"
        + body
        + "  return 0;\n}\n"
    )


HARNESSES: dict[str, str] = {
    "tcp_connect": _harness(r"""
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(@PORT@);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  connect_to(AF_INET, &addr, sizeof addr, "tcp");
"""),
    "write_outside": _harness(r"""
  const char *targets[] = {"@ABSOLUTE@", "@TMP@", "../escape-rel-@TOKEN@"};
  for (int i = 0; i < 3; i++) {
    FILE *f = fopen(targets[i], "w");
    fprintf(stderr, "%s: %s\n", targets[i], f ? "written" : strerror(errno));
    if (f) { fputs("escaped", f); fclose(f); }
  }
"""),
    "fork_bomb": _harness(r"""
  int hb = open("heartbeat", O_WRONLY | O_CREAT | O_APPEND, 0644);
  int forks = 0;
  for (; forks < 5000; forks++) {
    pid_t pid = fork();
    if (pid < 0) break;
    if (pid == 0) heartbeat_forever(hb);
  }
  fprintf(stderr, "forks=%d\n", forks);
"""),
    "daemon": _harness(r"""
  int hb = open("heartbeat", O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fork() == 0) {
    setsid();
    if (fork() == 0) {
      signal(SIGTERM, SIG_IGN);
      signal(SIGHUP, SIG_IGN);
      if (chdir("/") != 0) _exit(1);
      heartbeat_forever(hb);
    }
    _exit(0);
  }
  close(hb);
"""),
    "huge_allocation": _harness(r"""
  for (int i = 0; i < 20 * 16; i++) { /* 20 GB in 64 MB blocks, every page touched */
    char *p = malloc((size_t)64 << 20);
    if (!p) break;
    memset(p, 1, (size_t)64 << 20);
  }
  void *big = malloc((size_t)20 << 30);
  fprintf(stderr, "ALLOC-DONE %p\n", big);
"""),
    "blocked_sleep": _harness(r"""
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, NULL);
  heartbeat_forever(open("heartbeat", O_WRONLY | O_CREAT | O_APPEND, 0644));
"""),
    "kill_outside": _harness(r"""
  int rc = kill(@PID@, SIGKILL);
  fprintf(stderr, "kill(@PID@): %s\n", rc == 0 ? "sent" : strerror(errno));
  /* Only where this is a PID namespace's first process: outside one, kill(-1) would hit
     every process of the user. */
  if (getpid() <= 3) fprintf(stderr, "kill(-1): %d\n", kill(-1, SIGKILL));
"""),
    "unix_socket": _harness(r"""
  struct sockaddr_un addr = {0};
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, "@PATH@", sizeof addr.sun_path - 1);
  connect_to(AF_UNIX, &addr, sizeof addr, "unix socket");
  struct sockaddr_un abstract = {0};
  abstract.sun_family = AF_UNIX;
  strncpy(abstract.sun_path + 1, "@ABSTRACT@", sizeof abstract.sun_path - 2);
  connect_to(AF_UNIX, &abstract, offsetof(struct sockaddr_un, sun_path) + 1 + strlen("@ABSTRACT@"),
             "abstract socket");
"""),
    "read_secrets": _harness(r"""
  const char *paths[] = {"/etc/shadow", "@SECRET@"};
  for (int i = 0; i < 2; i++) {
    char buf[4096];
    FILE *f = fopen(paths[i], "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    fprintf(stderr, "%s: %s\n%s\n", paths[i], f ? "read" : strerror(errno), buf);
    if (f) fclose(f);
  }
"""),
    "include_secret": '#include <stdint.h>\n#include <stddef.h>\n#include "@PATH@"\n'
    "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return 0; }\n",
    "env_keys": _harness(r"""
  for (char **e = environ; *e; e++) fprintf(stderr, "ENV %s\n", *e);
  const char *key = getenv("OPENAI_API_KEY");
  fprintf(stderr, "OPENAI_API_KEY=%s\n", key ? key : "(unset)");
"""),
}
