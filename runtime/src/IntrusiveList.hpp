// Doubly linked intrusive list: O(1) append and removal with no allocation; an element can sit
// in several lists through several Link members.
#pragma once

namespace xmsg::rt {

template <class T>
struct Link {
  T* prev = nullptr;
  T* next = nullptr;
};

template <class T, Link<T> T::*L>
class IntrusiveList {
 public:
  bool empty() const { return head_ == nullptr; }
  T* front() const { return head_; }
  static T* next(T* x) { return (x->*L).next; }

  void push_back(T* x) {
    (x->*L).prev = tail_;
    (x->*L).next = nullptr;
    if (tail_) (tail_->*L).next = x;
    else head_ = x;
    tail_ = x;
  }
  void remove(T* x) {
    Link<T>& l = x->*L;
    if (l.prev) (l.prev->*L).next = l.next;
    else head_ = l.next;
    if (l.next) (l.next->*L).prev = l.prev;
    else tail_ = l.prev;
    l.prev = l.next = nullptr;
  }
  T* pop_front() {
    T* x = head_;
    if (x) remove(x);
    return x;
  }

 private:
  T* head_ = nullptr;
  T* tail_ = nullptr;
};

}  // namespace xmsg::rt
