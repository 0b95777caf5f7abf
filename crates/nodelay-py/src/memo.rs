//! The per-request memo: a client passes the very same Python objects with
//! every request (its timeout tuple, its default header list, often one
//! method and URL), so what they convert to is kept and reused while the
//! same immutable objects come again. Used by `Engine`, `AsyncEngine` and
//! `request_many`.

use std::sync::{Arc, Mutex};

use nodelay_core::{EncodedHeaders, Prepared};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use crate::args::str_pairs;

/// The last object converted and what it converted to. The object is held
/// (so no other object can take its address), and only immutable objects
/// (tuple, str, a list the caller never mutates) are memoized: the same
/// object means the same value.
pub(crate) struct SameObject<T>(Option<(Py<PyAny>, T)>);

impl<T> Default for SameObject<T> {
    fn default() -> Self {
        SameObject(None)
    }
}

impl<T: Clone> SameObject<T> {
    /// The value of `obj`: the remembered one when `obj` is the object seen
    /// last, else `convert(obj)` (then remembered).
    pub fn get<'py>(
        &mut self,
        obj: &Bound<'py, PyAny>,
        convert: impl FnOnce(&Bound<'py, PyAny>) -> PyResult<T>,
    ) -> PyResult<T> {
        if let Some(value) = self.lookup(obj) {
            return Ok(value);
        }
        let value = convert(obj)?;
        self.0 = Some((obj.clone().unbind(), value.clone()));
        Ok(value)
    }

    fn lookup(&self, obj: &Bound<'_, PyAny>) -> Option<T> {
        self.0
            .as_ref()
            .filter(|(seen, _)| seen.is(obj))
            .map(|(_, value)| value.clone())
    }
}

/// A `SameObject` shared by the threads that use one engine. A thread that
/// finds it busy converts its object itself (never waits for another).
pub(crate) struct SharedMemo<T>(Mutex<SameObject<T>>);

impl<T> Default for SharedMemo<T> {
    fn default() -> Self {
        SharedMemo(Mutex::new(SameObject::default()))
    }
}

impl<T: Clone> SharedMemo<T> {
    /// See `SameObject::get`.
    pub fn get<'py>(
        &self,
        obj: &Bound<'py, PyAny>,
        convert: impl FnOnce(&Bound<'py, PyAny>) -> PyResult<T>,
    ) -> PyResult<T> {
        if let Ok(memo) = self.0.try_lock() {
            if let Some(value) = memo.lookup(obj) {
                return Ok(value);
            }
        }
        let value = convert(obj)?;
        if let Ok(mut memo) = self.0.try_lock() {
            memo.0 = Some((obj.clone().unbind(), value.clone()));
        }
        Ok(value)
    }
}

/// A client passes the same default header list object with every request;
/// its fields are validated and encoded once and reused while a request's
/// list holds the very same `(name, value)` tuples. Tuples and str are
/// immutable and the memo keeps references to them (so no other object can
/// take their addresses): same objects, same bytes. A list is learnt when
/// the same list object comes twice in a row, so per-request lists (with a
/// Cookie header, per-request headers) never displace the defaults.
#[derive(Default)]
pub(crate) struct HeaderMemo {
    /// The tuples of the learnt list, in order, and their encoding.
    learnt: Option<(Vec<Py<PyAny>>, EncodedHeaders)>,
    /// The last list that did not match: learnt if it comes again.
    candidate: Option<Py<PyList>>,
    /// The last body-less request prepared with the learnt list (see
    /// `LastPrepared`); cleared whenever another list is learnt.
    pub last: Option<LastPrepared>,
}

impl HeaderMemo {
    /// Whether `list` is the learnt list (learning it if it is the
    /// candidate); false: encode it the ordinary way.
    pub fn knows(&mut self, list: &Bound<'_, PyList>) -> bool {
        let known = self.learnt.as_ref().is_some_and(|(items, _)| {
            items.len() == list.len() && list.iter().zip(items).all(|(a, b)| a.is(b))
        });
        known || self.learn(list)
    }

    /// The learnt list's encoding.
    pub fn encoding(&self) -> Option<&EncodedHeaders> {
        self.learnt.as_ref().map(|(_, encoded)| encoded)
    }

    /// Learns `list` if it is the candidate (else makes it the candidate);
    /// true when it is now the learnt list.
    fn learn(&mut self, list: &Bound<'_, PyList>) -> bool {
        if !self.candidate.as_ref().is_some_and(|c| c.is(list)) {
            self.candidate = Some(list.clone().unbind());
            return false;
        }
        self.candidate = None;
        let items: Vec<Bound<'_, PyAny>> = list.iter().collect();
        // Invalid fields are left to the ordinary path, which reports them.
        let Some(encoded) = str_pairs(&items, "headers")
            .ok()
            .and_then(|pairs| EncodedHeaders::new(&pairs).ok())
        else {
            return false;
        };
        self.learnt = Some((items.into_iter().map(Bound::unbind).collect(), encoded));
        self.last = None;
        true
    }
}

/// The last body-less request sent with the memo's learnt header list: its
/// bytes depend only on the method and URL text (and those headers), so the
/// same method and URL again (a loop over one URL, polling) is sent as
/// prepared the time before, without parsing the URL or encoding the head.
/// One entry: a different request replaces it. The prepared request is kept
/// from the second time in a row on, so requests that never repeat (a
/// crawl) pay no shared allocation, only the comparison.
pub(crate) struct LastPrepared {
    /// The method and URL objects (immutable str; held, so no other object
    /// takes their addresses): the same objects, or equal text, match.
    pub method: Py<PyString>,
    pub url: Py<PyString>,
    pub prepared: Option<Arc<Prepared>>,
}

impl LastPrepared {
    /// Whether `method` and `url` are this request's (same objects or text).
    pub fn matches(&self, method: &Bound<'_, PyString>, url: &Bound<'_, PyString>) -> bool {
        let same = |held: &Py<PyString>, given: &Bound<'_, PyString>| {
            held.is(given)
                || matches!((held.bind(given.py()).to_str(), given.to_str()), (Ok(a), Ok(b)) if a == b)
        };
        same(&self.url, url) && same(&self.method, method)
    }
}

/// A request prepared for this call, or shared with earlier identical ones.
// It lives on the stack for one call: boxing the owned case would add an
// allocation per request with a body.
#[allow(clippy::large_enum_variant)]
pub(crate) enum PreparedRef {
    Owned(Prepared),
    Shared(Arc<Prepared>),
}

impl std::ops::Deref for PreparedRef {
    type Target = Prepared;

    fn deref(&self) -> &Prepared {
        match self {
            PreparedRef::Owned(p) => p,
            PreparedRef::Shared(p) => p,
        }
    }
}
