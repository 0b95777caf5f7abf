//! `_core.CookieJar`: the engine's cookie jar (`nodelay_core::cookies`) for
//! Python. `nodelay.CookieJar` (python/nodelay/_cookies.py) wraps it.
//!
//! The two calls on a client's request path are `request_headers(url,
//! headers)` before and `extract(raw_response)` after each exchange; both
//! return at once when there is nothing to do (empty jar; no Set-Cookie
//! field), without building a Python object. The GIL is kept: every method takes microseconds and never
//! calls back into Python while holding the jar's lock, so no deadlock.

use std::path::PathBuf;

use nodelay_core::cookies::{self, CookieInfo, NewCookie};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use crate::head::Head;
use crate::response::RawResponse;
use crate::stream::RawStream;

/// `(name, value, domain, host_only, path, secure, http_only, expires)`.
type CookieTuple = (
    String,
    String,
    String,
    bool,
    String,
    bool,
    bool,
    Option<i64>,
);

fn tuple(c: CookieInfo) -> CookieTuple {
    (
        c.name,
        c.value,
        c.domain,
        c.host_only,
        c.path,
        c.secure,
        c.http_only,
        c.expires,
    )
}

#[pyclass(frozen, module = "nodelay._core")]
pub(crate) struct CookieJar {
    jar: cookies::CookieJar,
}

#[pymethods]
impl CookieJar {
    #[new]
    fn new() -> Self {
        CookieJar {
            jar: cookies::CookieJar::new(),
        }
    }

    #[classattr]
    const MAX_COOKIES_PER_RESPONSE: usize = cookies::MAX_COOKIES_PER_RESPONSE;
    #[classattr]
    const MAX_COOKIES_PER_JAR: usize = cookies::MAX_COOKIES_PER_JAR;

    /// The Cookie header value for a request to `url`, or None.
    pub(crate) fn header_for(&self, url: &str) -> Option<String> {
        self.jar.header_for_str(url)
    }

    /// Stores the Set-Cookie fields of an engine response (one call, no Python
    /// objects built); True when the jar changed.
    fn extract(&self, response: &Bound<'_, PyAny>) -> bool {
        if let Ok(whole) = response.cast::<RawResponse>() {
            let whole = whole.get();
            return self.store_head(whole.head(), whole.url_str(response.py()));
        }
        if let Ok(streamed) = response.cast::<RawStream>() {
            let streamed = streamed.get();
            return self.store_head(streamed.head(), streamed.url_str(response.py()));
        }
        if let Ok(streamed) = response.cast::<crate::aio::AsyncRawStream>() {
            let streamed = streamed.get();
            return self.store_head(streamed.head(), streamed.url_str(response.py()));
        }
        false
    }

    /// Stores Set-Cookie values received from `url`; returns how many cookies
    /// were added, replaced or deleted.
    fn store(&self, url: &str, set_cookie_values: Vec<String>) -> PyResult<usize> {
        self.jar
            .store_response_str(url, set_cookie_values.iter().map(|v| v.as_bytes()))
            .ok_or_else(|| PyValueError::new_err(format!("invalid URL {url:?}")))
    }

    /// Stores one cookie; `domain=""` makes a cookie sent to every host.
    #[pyo3(signature = (name, value, domain = "", path = "/", *, host_only = false, secure = false, http_only = false, expires = None))]
    #[allow(clippy::too_many_arguments)]
    fn set(
        &self,
        name: &str,
        value: &str,
        domain: &str,
        path: &str,
        host_only: bool,
        secure: bool,
        http_only: bool,
        expires: Option<i64>,
    ) -> PyResult<()> {
        if name.is_empty() || name.contains([';', '=', ',', ' ', '\t', '\r', '\n', '\0']) {
            return Err(PyValueError::new_err(format!(
                "invalid cookie name {name:?}"
            )));
        }
        if value.contains([';', '\r', '\n', '\0']) {
            return Err(PyValueError::new_err(format!(
                "invalid cookie value {value:?}"
            )));
        }
        let new = NewCookie {
            name,
            value,
            domain,
            host_only,
            path,
            secure,
            http_only,
            expires,
        };
        if self.jar.set(&new) {
            Ok(())
        } else {
            Err(PyValueError::new_err(format!(
                "cookie {name:?} not stored (bad domain/path, or the jar holds {} cookies)",
                cookies::MAX_COOKIES_PER_JAR
            )))
        }
    }

    /// Matching cookies as tuples `(name, value, domain, host_only, path,
    /// secure, http_only, expires)`; `None` filters match anything.
    #[pyo3(signature = (name = None, domain = None, path = None))]
    fn get_all(
        &self,
        name: Option<&str>,
        domain: Option<&str>,
        path: Option<&str>,
    ) -> Vec<CookieTuple> {
        let domain = domain.map(|d| d.trim_start_matches('.'));
        self.jar
            .cookies()
            .into_iter()
            .filter(|c| {
                !(name.is_some_and(|n| n != c.name)
                    || domain.is_some_and(|d| !d.eq_ignore_ascii_case(&c.domain))
                    || path.is_some_and(|p| p != c.path))
            })
            .map(tuple)
            .collect()
    }

    /// Every cookie as tuples (see `get_all`).
    fn items(&self) -> Vec<CookieTuple> {
        self.jar.cookies().into_iter().map(tuple).collect()
    }

    /// Removes matching cookies (`None` matches anything); returns how many.
    #[pyo3(signature = (name = None, domain = None, path = None))]
    fn delete(&self, name: Option<&str>, domain: Option<&str>, path: Option<&str>) -> usize {
        self.jar.remove(name, domain, path)
    }

    /// Removes every cookie, or those of one domain.
    #[pyo3(signature = (domain = None))]
    fn clear(&self, domain: Option<&str>) {
        match domain {
            None => self.jar.clear(),
            Some(d) => {
                self.jar.remove(None, Some(d), None);
            }
        }
    }

    fn __len__(&self) -> usize {
        self.jar.len()
    }

    /// The jar as Netscape cookies.txt text.
    fn to_netscape(&self) -> String {
        self.jar.to_netscape()
    }

    /// Adds the cookies of cookies.txt text; returns how many were stored.
    fn load_netscape(&self, text: &str) -> usize {
        self.jar.load_netscape(text)
    }

    /// Writes the jar to `path` in cookies.txt format (atomically).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.jar.save(&path)).map_err(PyErr::from)
    }

    /// Adds the cookies of the cookies.txt file at `path`; returns how many.
    fn load(&self, py: Python<'_>, path: PathBuf) -> PyResult<usize> {
        py.detach(|| self.jar.load(&path)).map_err(PyErr::from)
    }

    fn __repr__(&self) -> String {
        format!("<CookieJar [{} cookies]>", self.jar.len())
    }

    /// `headers` (a list of `(name, value)` pairs) plus the `Cookie` field a
    /// request to `url` gets: the jar's cookies, with `extra` (per-request
    /// cookies, a mapping) replacing those of the same name; nothing when the
    /// list has its own `Cookie` field (front's rule,
    /// `nodelay_front::cookies::request_cookie_with`). The list itself when
    /// there is nothing to add: an empty jar and no `extra` answer at once.
    #[pyo3(signature = (url, headers, extra = None))]
    pub(crate) fn request_headers<'py>(
        &self,
        url: &str,
        headers: &Bound<'py, PyList>,
        extra: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let has_own = || has_cookie_field(headers.iter());
        let value = match extra.filter(|e| e.is_truthy().unwrap_or(true)) {
            None => self.cookie_for(url, has_own)?,
            Some(extra) => {
                let items: Vec<(String, String)> = extra
                    .call_method0(intern!(extra.py(), "items"))?
                    .try_iter()?
                    .map(|item| item?.extract())
                    .collect::<PyResult<_>>()?;
                let items: Vec<(&str, &str)> = items
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.as_str()))
                    .collect();
                nodelay_front::cookies::request_cookie_with(&self.jar, url, &items, has_own)?
            }
        };
        match value.filter(|v| !v.is_empty()) {
            Some(value) => {
                let out = PyList::new(headers.py(), headers.iter())?;
                out.append(("Cookie", value))?;
                Ok(out)
            }
            None => Ok(headers.clone()),
        }
    }
}

impl CookieJar {
    /// The engine's jar this object wraps (what a batch reads and fills).
    pub(crate) fn core(&self) -> &cookies::CookieJar {
        &self.jar
    }

    /// Stores the Set-Cookie fields of a response head from `url`; True when
    /// the jar changed. No Python objects are built.
    pub(crate) fn store_head(&self, head: &Head, url: Option<&str>) -> bool {
        url.is_some_and(|url| nodelay_front::cookies::store_response(&self.jar, head, url))
    }

    /// The `Cookie` value to add to a request to `url`, unless the request
    /// has its own `Cookie` header (`has_own_cookie`, asked only when the
    /// jar has a value for `url`).
    pub(crate) fn cookie_for(
        &self,
        url: &str,
        has_own_cookie: impl FnOnce() -> PyResult<bool>,
    ) -> PyResult<Option<String>> {
        nodelay_front::cookies::request_cookie(&self.jar, url, has_own_cookie)
    }
}

/// Whether a `(name, value)` list has a `Cookie` field (names compared as
/// Python's `name.lower() == "cookie"` does).
pub(crate) fn has_cookie_field<'py>(
    fields: impl IntoIterator<Item = Bound<'py, PyAny>>,
) -> PyResult<bool> {
    for item in fields {
        let py = item.py();
        let name = item.get_item(0)?;
        let name = name.cast::<PyString>()?;
        let ascii_answer = name
            .to_str()
            .ok()
            .and_then(nodelay_front::cookies::is_cookie_name);
        let is_cookie = match ascii_answer {
            Some(answer) => answer,
            // Unicode lowercasing maps a few non-ASCII letters to ASCII ones
            // (KELVIN SIGN → k): let Python decide.
            None => name.call_method0(intern!(py, "lower"))?.eq("cookie")?,
        };
        if is_cookie {
            return Ok(true);
        }
    }
    Ok(false)
}
