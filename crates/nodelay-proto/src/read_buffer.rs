//! The read buffer both drivers read into: received bytes wait here until the
//! state machine has used them. Owning no socket, it only says where the
//! next read may write and what is left to look at.

/// A connection's reused read buffer: `buf[start..end]` holds received bytes
/// not consumed yet. It is allocated once per connection and never shrinks,
/// so steady-state requests read into memory that is already there.
#[derive(Debug)]
pub struct ReadBuffer {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl ReadBuffer {
    /// An empty buffer of `capacity` bytes (one read takes up to this much).
    pub fn new(capacity: usize) -> Self {
        ReadBuffer {
            buf: vec![0; capacity],
            start: 0,
            end: 0,
        }
    }

    /// Received bytes not consumed yet.
    #[inline]
    pub fn buffered(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// True when every received byte was consumed.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Marks the first `n` buffered bytes as used. An emptied buffer starts
    /// over at its beginning, so the next read gets the whole capacity.
    #[inline]
    pub fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.end - self.start);
        self.start += n;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Where the next read writes: the free tail of the buffer. A full buffer
    /// first moves its unconsumed bytes to the front, or when none was
    /// consumed grows (doubling) up to `max_bytes` (a response head may be
    /// larger than one buffer). `None`: the buffer holds `max_bytes`
    /// unconsumed bytes already.
    pub fn spare(&mut self, max_bytes: usize) -> Option<&mut [u8]> {
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else if self.buf.len() < max_bytes {
                let grown = (self.buf.len() * 2).clamp(1, max_bytes);
                self.buf.resize(grown, 0);
            } else {
                return None;
            }
        }
        Some(&mut self.buf[self.end..])
    }

    /// Records that a read put `n` bytes into the slice [`ReadBuffer::spare`] gave.
    #[inline]
    pub fn filled(&mut self, n: usize) {
        debug_assert!(self.end + n <= self.buf.len());
        self.end += n;
    }

    /// Moves up to `dst.len()` buffered bytes into `dst`; returns how many.
    pub fn take_into(&mut self, dst: &mut [u8]) -> usize {
        let buffered = self.buffered();
        let n = buffered.len().min(dst.len());
        dst[..n].copy_from_slice(&buffered[..n]);
        self.consume(n);
        n
    }
}

#[cfg(test)]
mod tests {
    use super::ReadBuffer;

    fn read(buf: &mut ReadBuffer, max: usize, bytes: &[u8]) -> bool {
        match buf.spare(max) {
            Some(spare) => {
                let n = spare.len().min(bytes.len());
                spare[..n].copy_from_slice(&bytes[..n]);
                buf.filled(n);
                true
            }
            None => false,
        }
    }

    #[test]
    fn consumed_bytes_leave_and_an_empty_buffer_starts_over() {
        let mut buf = ReadBuffer::new(8);
        assert!(read(&mut buf, 8, b"abcdef"));
        buf.consume(2);
        assert_eq!(buf.buffered(), b"cdef");
        buf.consume(4);
        assert!(buf.is_empty());
        assert_eq!(buf.spare(8).map(|s| s.len()), Some(8));
    }

    #[test]
    fn a_full_buffer_compacts_then_grows_up_to_its_limit() {
        let mut buf = ReadBuffer::new(4);
        assert!(read(&mut buf, 16, b"abcd"));
        buf.consume(1);
        // Full with a consumed byte in front: compacted, one byte free.
        assert_eq!(buf.spare(16).map(|s| s.len()), Some(1));
        assert!(read(&mut buf, 16, b"e"));
        assert_eq!(buf.buffered(), b"bcde");
        // Full, nothing consumed: doubled.
        assert_eq!(buf.spare(16).map(|s| s.len()), Some(4));
        assert!(read(&mut buf, 16, b"fghi"));
        assert_eq!(buf.spare(16).map(|s| s.len()), Some(8));
        assert!(read(&mut buf, 16, b"jklmnopq"));
        assert_eq!(buf.buffered(), b"bcdefghijklmnopq");
        assert!(buf.spare(16).is_none(), "the limit is reached");
    }

    #[test]
    fn take_into_copies_and_consumes() {
        let mut buf = ReadBuffer::new(8);
        assert!(read(&mut buf, 8, b"abcdef"));
        let mut dst = [0u8; 4];
        assert_eq!(buf.take_into(&mut dst), 4);
        assert_eq!(&dst, b"abcd");
        assert_eq!(buf.buffered(), b"ef");
    }
}
