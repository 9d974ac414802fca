// Puts the file behind SMPI's folded buffers on a tmpfs: a library that scripts/smpirun.sh
// preloads into the simulator (LD_PRELOAD), built only by the SMPI build. Not part of libconvgrid.
//
// SimGrid 3.32 backs every SMPI_SHARED_MALLOC block with one file that it creates with
// mkstemp("/tmp/simgrid-shmalloc-XXXXXX") and unlinks at once (src/smpi/internals/smpi_shared.cpp;
// the path is fixed in the source). Where /tmp is on a disk, every write into folded memory (SMPI's
// own copies into folded receive buffers, its reductions into them) dirties that file's page
// cache; the kernel's writeback cleans the pages and write-protects every mapping of them, so the
// next write faults again, once per mapping: 30-40% of a 1024-rank step's host time here. This
// mkstemp makes that one file in /dev/shm instead, when /dev/shm is a tmpfs, and leaves every
// other call alone. What the simulation computes does not change.
#include <dlfcn.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstring>

namespace {

constexpr char kSimgridTemplate[] = "/tmp/simgrid-shmalloc-XXXXXX";
constexpr char kTmpfsTemplate[] = "/dev/shm/simgrid-shmalloc-XXXXXX";

using Mkstemp = int (*)(char*);

Mkstemp libc_mkstemp() {
  static auto const real = reinterpret_cast<Mkstemp>(dlsym(RTLD_NEXT, "mkstemp"));
  return real;
}

bool dev_shm_is_tmpfs() {
  struct statfs fs {};
  return statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC;
}

}  // namespace

extern "C" int mkstemp(char* name) {
  Mkstemp const real = libc_mkstemp();
  if (std::strcmp(name, kSimgridTemplate) != 0 || !dev_shm_is_tmpfs()) return real(name);
  char moved[sizeof kTmpfsTemplate];
  std::memcpy(moved, kTmpfsTemplate, sizeof kTmpfsTemplate);
  int const fd = real(moved);
  if (fd < 0) return real(name);
  // SimGrid unlinks the file at once by the name it passed; this one is unlinked here instead,
  // and the name is left as it came (with its X's), which SimGrid's unlink does not find.
  unlink(moved);
  return fd;
}
