// The worker's gate data, most recently used first, kept within a device and a host byte budget.
//
// A suite campaign cycles through its shapes, and each evaluation touches the campaign shape's data set and
// one per gate case. Least-recently-used eviction gets no hit at all once that cycle holds more data sets
// than the cache (each is evicted just before its next use), and a miss rebuilds the inputs on the host and
// runs the reference again: for a large attention shape more than the evaluation itself. So the limit is
// bytes, with a count cap far above what a suite needs, not a small count.
#pragma once
#include <cstddef>
#include <list>
#include <memory>
#include <string>
#include <utility>

namespace kf {

template <class T>
class DatasetCache {
 public:
  struct Budget {
    size_t device_bytes = 0;
    size_t host_bytes = 0;
    size_t count = 256;
  };
  explicit DatasetCache(Budget b) : budget_(b) {}

  // The entry under key, now the most recent; nullptr when absent.
  std::shared_ptr<T> find(const std::string& key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->key != key) continue;
      entries_.splice(entries_.begin(), entries_, it);
      ++hits_;
      return it->value;
    }
    ++misses_;
    return nullptr;
  }

  // Adds an entry as the most recent, then drops the least recent ones while over a budget. The newest
  // always stays, whatever its size: the evaluation that built it is about to use it.
  void add(std::string key, std::shared_ptr<T> value, size_t device_bytes, size_t host_bytes) {
    entries_.push_front(Entry{std::move(key), std::move(value), device_bytes, host_bytes});
    device_ += device_bytes;
    host_ += host_bytes;
    while (entries_.size() > 1 &&
           (device_ > budget_.device_bytes || host_ > budget_.host_bytes || entries_.size() > budget_.count)) {
      device_ -= entries_.back().device_bytes;
      host_ -= entries_.back().host_bytes;
      entries_.pop_back();  // freed once no evaluation holds it
    }
  }

  size_t size() const { return entries_.size(); }
  size_t hits() const { return hits_; }
  size_t misses() const { return misses_; }

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<T> value;
    size_t device_bytes = 0, host_bytes = 0;
  };
  Budget budget_;
  std::list<Entry> entries_;  // most recent first
  size_t device_ = 0, host_ = 0, hits_ = 0, misses_ = 0;
};

}  // namespace kf
