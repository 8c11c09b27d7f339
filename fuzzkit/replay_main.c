/*
 * Replay driver for coverage builds: runs a libFuzzer-style harness over files.
 *
 * Usage: binary [FILE_OR_DIR ...]
 * Runs LLVMFuzzerInitialize (if defined), one empty input, then every regular file
 * given (or found directly inside a given directory). Each input is copied into a
 * buffer of exactly its size, as libFuzzer does.
 *
 * A crash, abort or hang (LOGICFUZZ_REPLAY_TIMEOUT seconds per input, default 10)
 * still writes the coverage profile collected so far before the process exits, so a
 * bad input does not lose the coverage of the inputs before it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);
/* Provided by the profile runtime when linked with -fprofile-instr-generate. */
__attribute__((weak)) int __llvm_profile_write_file(void);

static unsigned replay_timeout = 10;

static void on_fatal_signal(int sig) {
  static volatile sig_atomic_t handling = 0;
  if (!handling) {
    handling = 1;
    if (__llvm_profile_write_file) __llvm_profile_write_file();
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

static void install_handlers(void) {
  static char alt_stack[1 << 16];
  stack_t ss;
  struct sigaction sa;
  int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGALRM, SIGTERM};
  size_t i;

  /* Stack overflows need an alternate stack for the handler to run at all. */
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof(alt_stack);
  ss.ss_flags = 0;
  sigaltstack(&ss, NULL);
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_fatal_signal;
  sa.sa_flags = SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) sigaction(sigs[i], &sa, NULL);
}

static void run_input(const uint8_t *data, size_t size) {
  uint8_t *copy = (uint8_t *)malloc(size ? size : 1);
  if (!copy) return;
  if (size) memcpy(copy, data, size);
  alarm(replay_timeout);
  LLVMFuzzerTestOneInput(copy, size);
  alarm(0);
  free(copy);
}

static void run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  uint8_t *buf;
  long size;
  if (!f) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return;
  }
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = (uint8_t *)malloc(size > 0 ? (size_t)size : 1);
  if (buf && (size <= 0 || fread(buf, 1, (size_t)size, f) == (size_t)size))
    run_input(buf, size > 0 ? (size_t)size : 0);
  free(buf);
  fclose(f);
}

static void run_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "replay: no such file %s\n", path);
    return;
  }
  if (S_ISDIR(st.st_mode)) {
    DIR *dir = opendir(path);
    struct dirent *entry;
    char child[4096];
    if (!dir) return;
    while ((entry = readdir(dir)) != NULL) {
      if (entry->d_name[0] == '.') continue;
      snprintf(child, sizeof(child), "%s/%s", path, entry->d_name);
      if (stat(child, &st) == 0 && S_ISREG(st.st_mode)) run_file(child);
    }
    closedir(dir);
  } else if (S_ISREG(st.st_mode)) {
    run_file(path);
  }
}

int main(int argc, char **argv) {
  const char *limit = getenv("LOGICFUZZ_REPLAY_TIMEOUT");
  int i;
  if (limit && atoi(limit) > 0) replay_timeout = (unsigned)atoi(limit);
  install_handlers();
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  run_input((const uint8_t *)"", 0);
  for (i = 1; i < argc; i++) run_path(argv[i]);
  return 0;
}
