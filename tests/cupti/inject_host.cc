// Loads libshardscope_inject.so as the CUDA driver would and calls InitializeInjection: twice (the driver
// may), and again in a forked child. argv[2], when given, is a libcuda loaded first, so the library believes
// it runs inside cuInit. Exit 0 and "ok" when the traced process was never harmed.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  if (argc > 2 && !dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL)) {
    std::fprintf(stderr, "cannot load %s: %s\n", argv[2], dlerror());
    return 3;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 4;
  }
  auto init = reinterpret_cast<int (*)()>(dlsym(lib, "InitializeInjection"));
  if (!init) return 5;
  if (init() != 1 || init() != 1) return 6;
  pid_t pid = fork();
  if (pid == 0) _exit(init() == 1 ? 0 : 7);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 8;
  std::printf("ok\n");
  return 0;
}
