/* The nodelay gem's C extension: Nodelay::Native (a client),
 * Nodelay::Response and Response#json's fast path (json.c) over
 * libnodelay_ffi (crates/nodelay-ffi, docs/ffi.md), linked statically.
 * lib/nodelay.rb builds the Ruby API on these. */
#include "call.h"

VALUE nodelay_rb_module;

/* Nodelay.code_name(code): the ABI's short name of an error code. */
static VALUE code_name(VALUE self, VALUE code) {
    (void)self;
    return rb_str_new_cstr(nodelay_code_name(NUM2UINT(code)));
}

void Init_nodelay_ext(void) {
    if (nodelay_abi_version() != NODELAY_ABI_VERSION)
        rb_raise(rb_eLoadError, "libnodelay_ffi has ABI %u, this extension was built for %u",
                 nodelay_abi_version(), NODELAY_ABI_VERSION);
    nodelay_rb_module = rb_define_module("Nodelay");
    rb_define_const(nodelay_rb_module, "ABI_VERSION", UINT2NUM(NODELAY_ABI_VERSION));
    rb_define_module_function(nodelay_rb_module, "code_name", code_name, 1);
    nodelay_rb_init_client();
    nodelay_rb_init_response();
    nodelay_rb_init_form();
    nodelay_rb_init_json();
}
