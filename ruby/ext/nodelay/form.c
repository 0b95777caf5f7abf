/* Nodelay::Native.encode_form(pairs): the application/x-www-form-urlencoded
 * body of a Hash (or an Array of [name, value] pairs) of Strings, Symbols
 * and Numerics, byte for byte what URI.encode_www_form gives (unreserved
 * `*-._0-9A-Za-z` kept, a space as `+`, every other byte as `%XX`), in one
 * pass instead of a gsub per component. nil when a pair is anything else (a
 * nil or Array value, a String in an ASCII-incompatible encoding): the
 * caller then uses URI.encode_www_form, which knows those cases. */
#include <ruby/encoding.h>

#include "call.h"

static int unreserved(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           c == '*' || c == '-' || c == '.' || c == '_';
}

/* Appends `v` encoded to `out`; 0 when `v` is not a plain component. */
static int append_component(VALUE out, VALUE v) {
    static const char hex[] = "0123456789ABCDEF";
    if (SYMBOL_P(v)) v = rb_sym2str(v);
    else if (RB_INTEGER_TYPE_P(v) || RB_FLOAT_TYPE_P(v)) v = rb_obj_as_string(v);
    if (!RB_TYPE_P(v, T_STRING) || !rb_enc_asciicompat(rb_enc_get(v))) return 0;
    const unsigned char *p = (const unsigned char *)RSTRING_PTR(v);
    long n = RSTRING_LEN(v);
    char buf[256];
    long used = 0;
    for (long i = 0; i < n; i++) {
        if (used > (long)sizeof buf - 3) {
            rb_str_cat(out, buf, used);
            used = 0;
        }
        unsigned char c = p[i];
        if (unreserved(c)) {
            buf[used++] = (char)c;
        } else if (c == ' ') {
            buf[used++] = '+';
        } else {
            buf[used++] = '%';
            buf[used++] = hex[c >> 4];
            buf[used++] = hex[c & 15];
        }
    }
    rb_str_cat(out, buf, used);
    RB_GC_GUARD(v);
    return 1;
}

struct form {
    VALUE out;
    int ok;
};

static int append_pair(VALUE name, VALUE value, VALUE arg) {
    struct form *f = (struct form *)arg;
    if (RSTRING_LEN(f->out)) rb_str_cat(f->out, "&", 1);
    f->ok = append_component(f->out, name) && (rb_str_cat(f->out, "=", 1), 1) &&
            append_component(f->out, value);
    return f->ok ? ST_CONTINUE : ST_STOP;
}

static VALUE encode_form(VALUE mod, VALUE pairs) {
    struct form f = {rb_str_buf_new(128), 1};
    if (RB_TYPE_P(pairs, T_HASH)) {
        rb_hash_foreach(pairs, append_pair, (VALUE)&f);
    } else if (RB_TYPE_P(pairs, T_ARRAY)) {
        for (long i = 0; f.ok && i < RARRAY_LEN(pairs); i++) {
            VALUE pair = RARRAY_AREF(pairs, i);
            if (!RB_TYPE_P(pair, T_ARRAY) || RARRAY_LEN(pair) != 2) return Qnil;
            append_pair(RARRAY_AREF(pair, 0), RARRAY_AREF(pair, 1), (VALUE)&f);
        }
    } else {
        return Qnil;
    }
    if (!f.ok) return Qnil;
    rb_obj_freeze(f.out);
    return f.out;
}

void nodelay_rb_init_form(void) {
    VALUE native = rb_const_get(nodelay_rb_module, rb_intern("Native"));
    rb_define_singleton_method(native, "encode_form", encode_form, 1);
}
