"""Read-only hash tables for the encode kernels: token bytes -> id, and merge pair -> (rank, id).

>>> m = StrMap([b"ab", b"c"], [7, 9])
>>> m.lookup(b"ab"), m.lookup(b"x")
(7, -1)
>>> PairMap([(1, 2)], [5]).lookup(1, 2)
(0, 5)
"""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy
from libcpp.vector cimport vector

cdef uint64_t EMPTY_KEY = 0xFFFFFFFFFFFFFFFFULL


cdef inline uint64_t slots_for(Py_ssize_t n) noexcept:
    cdef uint64_t size = 16
    while size < <uint64_t>(2 * n + 1):
        size <<= 1
    return size


cdef class StrMap:
    """bytes -> id; the first of two equal keys wins."""

    def __cinit__(self, keys, values):
        cdef uint64_t size = slots_for(len(keys))
        cdef bytes key
        cdef Py_ssize_t n, k
        cdef uint64_t h, i
        cdef Slot empty
        empty.hash = empty.head = 0
        empty.off = 0
        empty.length = -1  # marks an empty slot (values may be negative)
        empty.value = -1
        self.mask = size - 1
        self.slots.assign(size, empty)
        self.count = 0
        for key, value in zip(keys, values):
            n = len(key)
            if self.get(key, n) >= 0:
                continue
            h = hash_bytes(key, n)
            i = h & self.mask
            while self.slots[i].length >= 0:
                i = (i + 1) & self.mask
            self.slots[i].hash = h
            self.slots[i].head = load_head(key, n)
            self.slots[i].off = self.blob.size()
            self.slots[i].length = <int32_t>n
            self.slots[i].value = value
            for k in range(n):
                self.blob.push_back(key[k])
            self.count += 1

    cdef int32_t get(self, const char* p, Py_ssize_t n) noexcept nogil:
        cdef uint64_t h = hash_bytes(p, n)
        cdef uint64_t i = h & self.mask
        cdef uint64_t head = load_head(p, n)
        cdef const Slot* slot
        while True:
            slot = &self.slots[i]
            if slot.length < 0:
                return -1
            if slot.hash == h and slot.head == head and slot.length == n:
                if n <= 8 or memcmp(self.blob.data() + slot.off + 8, p + 8, n - 8) == 0:
                    return slot.value
            i = (i + 1) & self.mask

    def lookup(self, bytes key) -> int:
        return self.get(key, len(key))

    def __len__(self):
        return self.count


cdef class PieceCache:
    """bytes -> merged tokens, for one thread; cleared when it holds `limit` pieces or CACHE_BYTES of them."""

    def __cinit__(self, Py_ssize_t limit=65536):
        self.limit = limit
        self.mask = 63  # starts small (one per encode call) and doubles as it fills
        self.slots.resize(self.mask + 1)
        self.clear()

    cdef void clear(self) noexcept nogil:
        cdef Py_ssize_t k
        for k in range(<Py_ssize_t>self.slots.size()):
            self.slots[k].used = 0
        self.keys.clear()
        self.arena.clear()
        self.count = 0

    cdef void grow(self) noexcept nogil:
        cdef vector[CacheSlot] old = self.slots
        cdef Py_ssize_t k
        cdef uint64_t i
        self.mask = self.mask * 2 + 1
        self.slots.resize(self.mask + 1)
        for k in range(<Py_ssize_t>self.slots.size()):
            self.slots[k].used = 0
        for k in range(<Py_ssize_t>old.size()):
            if old[k].used:
                i = old[k].hash & self.mask
                while self.slots[i].used:
                    i = (i + 1) & self.mask
                self.slots[i] = old[k]

    cdef int64_t find(self, const char* p, Py_ssize_t n, uint64_t h) noexcept nogil:
        """Offset of the entry in arena, or -1."""
        cdef uint64_t i = h & self.mask
        cdef const CacheSlot* slot
        while True:
            slot = &self.slots[i]
            if not slot.used:
                return -1
            if slot.hash == h and slot.length == n and memcmp(self.keys.data() + slot.key_off, p, n) == 0:
                return slot.val_off
            i = (i + 1) & self.mask

    cdef void add(self, const char* p, Py_ssize_t n, uint64_t h, const int32_t* ids, const int32_t* starts,
                  const int32_t* ends, Py_ssize_t count) noexcept nogil:
        cdef uint64_t i
        cdef Py_ssize_t k
        if self.count >= self.limit or self.keys.size() + n + 4 * (self.arena.size() + 1 + 3 * count) > CACHE_BYTES:
            self.clear()
        elif 2 * (self.count + 1) > <Py_ssize_t>self.slots.size():
            self.grow()
        i = h & self.mask
        while self.slots[i].used:
            i = (i + 1) & self.mask
        self.slots[i].used = 1
        self.slots[i].hash = h
        self.slots[i].length = <int32_t>n
        self.slots[i].key_off = self.keys.size()
        self.slots[i].val_off = self.arena.size()
        self.keys.insert(self.keys.end(), p, p + n)
        self.arena.push_back(<int32_t>count)
        for k in range(count):
            self.arena.push_back(ids[k])
            self.arena.push_back(starts[k])
            self.arena.push_back(ends[k])
        self.count += 1


cdef size_t CACHE_BYTES = 32 << 20  # keys and merged tokens a thread's PieceCache holds at most


cdef inline uint64_t pair_key(int32_t a, int32_t b) noexcept nogil:
    return (<uint64_t><uint32_t>a << 32) | <uint32_t>b


cdef inline uint64_t mix(uint64_t k) noexcept nogil:
    k = (k ^ (k >> 31)) * 0x9E3779B97F4A7C15ULL
    return k ^ (k >> 29)


cdef class PairMap:
    """(left, right) -> (rank, merged id); rank = position in `pairs`; the first of two equal pairs wins."""

    def __cinit__(self, pairs, merged):
        cdef uint64_t size = slots_for(len(pairs))
        cdef uint64_t key, i
        cdef PairSlot empty
        empty.key = EMPTY_KEY
        empty.val = -1
        self.mask = size - 1
        self.slots.assign(size, empty)
        for rank, ((a, b), new) in enumerate(zip(pairs, merged)):
            key = pair_key(a, b)
            i = mix(key) & self.mask
            while self.slots[i].key != EMPTY_KEY and self.slots[i].key != key:
                i = (i + 1) & self.mask
            if self.slots[i].key == EMPTY_KEY:
                self.slots[i].key = key
                self.slots[i].val = (<int64_t>rank << 32) | <uint32_t><int32_t>new

    cdef int64_t get(self, int32_t a, int32_t b) noexcept nogil:
        cdef uint64_t key = pair_key(a, b)
        cdef uint64_t i = mix(key) & self.mask
        cdef const PairSlot* slot
        while True:
            slot = &self.slots[i]
            if slot.key == key:
                return slot.val
            if slot.key == EMPTY_KEY:
                return -1
            i = (i + 1) & self.mask

    def lookup(self, int a, int b):
        cdef int64_t v = self.get(a, b)
        return None if v < 0 else (int(v >> 32), int(<uint32_t>v))
