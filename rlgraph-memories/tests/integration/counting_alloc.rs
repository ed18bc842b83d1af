//! An allocator that counts, per thread, the bytes allocated and not yet freed: the memory
//! tests measure what a memory holds with it, independently of the memory's own figures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting.
pub struct Counting;

thread_local! {
    // A const-initialised Cell has no destructor and never allocates, so the allocator may
    // touch it at any time, thread exit included.
    static NET: Cell<isize> = const { Cell::new(0) };
}

fn add(bytes: isize) {
    let _ = NET.try_with(|n| n.set(n.get() + bytes));
}

/// Bytes this thread has allocated and not freed, since it started.
pub fn net_bytes() -> isize {
    NET.try_with(Cell::get).unwrap_or(0)
}

// SAFETY: every call is forwarded to the system allocator unchanged; the counter is only
// bookkeeping beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        add(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            add(new_size as isize - layout.size() as isize);
        }
        p
    }
}
