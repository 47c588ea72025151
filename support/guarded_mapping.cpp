#include "support/guarded_mapping.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

namespace parity {

namespace {

constexpr int kSlots = 64;

// Registered ranges, read by the signal handler: plain atomics only (lock-free, no
// allocation), so the handler stays async-signal-safe.
struct Slot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> faulted{false};
  std::atomic<bool> writable{false};
};
Slot g_slots[kSlots];
std::atomic<bool> g_slot_taken[kSlots];
uintptr_t g_page_size = 4096;
struct sigaction g_previous {};

void OnSigbus(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Slot& slot : g_slots) {
    const uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    if (begin == 0 || addr < begin || addr >= slot.end.load(std::memory_order_acquire)) continue;
    // The file ended before this page: put a zero page in its place (mmap is a plain
    // syscall, safe here) and let the faulting load run again.
    void* page = reinterpret_cast<void*>(addr & ~(g_page_size - 1));
    const int protection = slot.writable.load(std::memory_order_acquire) ? PROT_READ | PROT_WRITE : PROT_READ;
    if (::mmap(page, g_page_size, protection, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
      slot.faulted.store(true, std::memory_order_release);
      return;
    }
    break;
  }
  // Not ours: whoever handled SIGBUS before us does, or the default action (which a return
  // to the faulting instruction triggers again, now with the old disposition).
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) g_previous.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
    return;
  }
  struct sigaction restore {};
  restore.sa_handler = SIG_DFL;
  sigemptyset(&restore.sa_mask);
  ::sigaction(SIGBUS, &restore, nullptr);
}

Status InstallHandlerOnce() {
  static std::once_flag once;
  static int install_errno = 0;
  std::call_once(once, [] {
    g_page_size = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    struct sigaction action {};
    action.sa_sigaction = OnSigbus;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    if (::sigaction(SIGBUS, &action, &g_previous) != 0) install_errno = errno;
  });
  if (install_errno != 0) return Unavailable(std::string("cannot install the SIGBUS guard: ") + std::strerror(install_errno));
  return Status();
}

}  // namespace

Result<std::unique_ptr<GuardedMapping>> GuardedMapping::Map(int fd, size_t size, Access access) {
  if (size == 0) return InvalidArgument("cannot map an empty file");
  PARITY_RETURN_IF_ERROR(InstallHandlerOnce());
  int slot = -1;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (g_slot_taken[i].compare_exchange_strong(expected, true)) {
      slot = i;
      break;
    }
  }
  if (slot < 0) return Unavailable("more than 64 files are mapped at once");
  const bool writable = access == Access::kPrivateWritable;
  void* data = ::mmap(nullptr, size, writable ? PROT_READ | PROT_WRITE : PROT_READ, writable ? MAP_PRIVATE : MAP_SHARED,
                      fd, 0);
  if (data == MAP_FAILED) {
    const int err = errno;
    g_slot_taken[slot].store(false);
    return Unavailable(std::string("mmap failed: ") + std::strerror(err));
  }
  ::madvise(data, size, MADV_SEQUENTIAL);
  Slot& s = g_slots[slot];
  s.faulted.store(false, std::memory_order_relaxed);
  s.writable.store(writable, std::memory_order_relaxed);
  s.end.store(reinterpret_cast<uintptr_t>(data) + size, std::memory_order_release);
  s.begin.store(reinterpret_cast<uintptr_t>(data), std::memory_order_release);
  return std::unique_ptr<GuardedMapping>(new GuardedMapping(static_cast<char*>(data), size, slot, access));
}

GuardedMapping::~GuardedMapping() {
  // Unregistered before unmapped, so a later mapping at the same address is not taken for ours.
  g_slots[slot_].begin.store(0, std::memory_order_release);
  g_slots[slot_].end.store(0, std::memory_order_release);
  ::munmap(data_, size_);
  g_slot_taken[slot_].store(false, std::memory_order_release);
}

bool GuardedMapping::shrank() const { return g_slots[slot_].faulted.load(std::memory_order_acquire); }

void GuardedMapping::Release(size_t upto) {
  upto &= ~(static_cast<size_t>(g_page_size) - 1);
  if (upto <= released_) return;
  ::madvise(data_ + released_, upto - released_, MADV_DONTNEED);
  released_ = upto;
}

}  // namespace parity
