// Containers for millions of small records read from a large dump: growing them never
// copies what is already stored (no vector doubling, so no 1.5x peak), and elements and
// strings keep their addresses.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <iterator>
#include <memory>
#include <string_view>
#include <vector>

namespace parity::msprobe {

// push_back / operator[] / iteration over fixed-size chunks of T (4 MiB each).
template <typename T>
class ChunkedVector {
  static_assert(std::is_trivially_destructible_v<T> && std::is_trivially_copyable_v<T>);
  static constexpr size_t kChunkBytes = size_t{4} << 20;
  static constexpr size_t kChunk = kChunkBytes / sizeof(T);

  struct Free {
    void operator()(T* p) const { ::munmap(p, kChunkBytes); }
  };

 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return chunks_[i / kChunk].get()[i % kChunk]; }
  const T& operator[](size_t i) const { return chunks_[i / kChunk].get()[i % kChunk]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(const T& value) {
    if (size_ == chunks_.size() * kChunk) {
      // Page-aligned, so a 64-byte record never straddles two cache lines. From the second
      // chunk on (a large dump) its pages are populated in one call, cheaper than a page fault
      // per page; a small dump touches only what it uses of its first chunk.
      const int populate = chunks_.empty() ? 0 : MAP_POPULATE;
      void* chunk = ::mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | populate, -1, 0);
      if (chunk == MAP_FAILED) throw std::bad_alloc();
      chunks_.emplace_back(static_cast<T*>(chunk));
    }
    new (&(*this)[size_]) T(value);
    ++size_;
  }

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;
    const_iterator(const ChunkedVector* v, size_t i) : v_(v), i_(i) {}
    const T& operator*() const { return (*v_)[i_]; }
    const T* operator->() const { return &(*v_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }
    bool operator!=(const const_iterator& o) const { return i_ != o.i_; }

   private:
    const ChunkedVector* v_;
    size_t i_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  std::vector<std::unique_ptr<T, Free>> chunks_;
  size_t size_ = 0;
};

// Append-only storage for many short strings; the views it returns stay valid for its life.
class TextArena {
 public:
  std::string_view Add(std::string_view text) {
    if (text.size() > kBlock / 4) {
      big_.push_back(std::unique_ptr<char[]>(new char[text.size()]));
      std::memcpy(big_.back().get(), text.data(), text.size());
      return {big_.back().get(), text.size()};
    }
    if (blocks_.empty() || used_ + text.size() > kBlock) {
      blocks_.push_back(std::unique_ptr<char[]>(new char[kBlock]));
      used_ = 0;
    }
    char* at = blocks_.back().get() + used_;
    std::memcpy(at, text.data(), text.size());
    used_ += text.size();
    return {at, text.size()};
  }

 private:
  static constexpr size_t kBlock = size_t{1} << 20;
  std::vector<std::unique_ptr<char[]>> blocks_, big_;
  size_t used_ = 0;
};

}  // namespace parity::msprobe
