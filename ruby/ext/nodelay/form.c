/* Nodelay::Native.encode_form(pairs): the application/x-www-form-urlencoded
 * body of a Hash (or an Array of [name, value] pairs) of Strings, Symbols
 * and Numerics, byte for byte what URI.encode_www_form gives (unreserved
 * `*-._0-9A-Za-z` kept, a space as `+`, every other byte as `%XX`), in one
 * pass instead of a gsub per component. nil when a pair is anything else (a
 * nil or Array value, a String in an ASCII-incompatible encoding): the
 * caller then uses URI.encode_www_form, which knows those cases. */
#include <ruby/encoding.h>

#include "call.h"

/* The encoded bytes gather in a buffer on the stack and become one String
 * at the end, so a form of this size or less costs one allocation; a larger
 * one is flushed into its String each time the buffer fills. */
#define FORM_BUFFER_BYTES 1024
/* The most bytes one input byte becomes (`%XX`). */
#define ENCODED_BYTE_MAX 3

struct form {
    VALUE out; /* the body so far (Qnil until the buffer first fills) */
    long used;
    int ok;
    char buf[FORM_BUFFER_BYTES];
};

/* What each byte becomes: itself (unreserved), `+` (a space) or `%XX` (0),
 * looked up once per byte. */
static char kept[256];

static void fill_kept(void) {
    for (int c = 0; c < 256; c++) {
        int unreserved = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
                         (c >= 'a' && c <= 'z') || c == '*' || c == '-' || c == '.' || c == '_';
        kept[c] = unreserved ? (char)c : c == ' ' ? '+' : 0;
    }
}

/* Moves the buffer's bytes into the body String. */
static void flush(struct form *f) {
    if (NIL_P(f->out))
        f->out = rb_str_new(f->buf, f->used);
    else
        rb_str_cat(f->out, f->buf, f->used);
    f->used = 0;
}

static void put(struct form *f, char c) {
    if (f->used > FORM_BUFFER_BYTES - ENCODED_BYTE_MAX) flush(f);
    f->buf[f->used++] = c;
}

/* Whether `v`'s bytes are ASCII where ASCII is meant: UTF-8, US-ASCII and
 * binary (nearly every String) without looking the encoding up. */
static int ascii_compatible(VALUE v) {
    int index = ENCODING_GET(v);
    if (index == rb_utf8_encindex() || index == rb_usascii_encindex() ||
        index == rb_ascii8bit_encindex())
        return 1;
    return rb_enc_asciicompat(rb_enc_from_index(index));
}

/* Appends `v` encoded; 0 when `v` is not a plain component. */
static int append_component(struct form *f, VALUE v) {
    static const char hex[] = "0123456789ABCDEF";
    if (SYMBOL_P(v)) v = rb_sym2str(v);
    else if (RB_INTEGER_TYPE_P(v) || RB_FLOAT_TYPE_P(v)) v = rb_obj_as_string(v);
    if (!RB_TYPE_P(v, T_STRING) || !ascii_compatible(v)) return 0;
    const unsigned char *p = (const unsigned char *)RSTRING_PTR(v);
    long n = RSTRING_LEN(v);
    for (long i = 0; i < n; i++) {
        if (f->used > FORM_BUFFER_BYTES - ENCODED_BYTE_MAX) flush(f);
        unsigned char c = p[i];
        if (kept[c]) {
            f->buf[f->used++] = kept[c];
        } else {
            f->buf[f->used++] = '%';
            f->buf[f->used++] = hex[c >> 4];
            f->buf[f->used++] = hex[c & 15];
        }
    }
    RB_GC_GUARD(v);
    return 1;
}

static int append_pair(VALUE name, VALUE value, VALUE arg) {
    struct form *f = (struct form *)arg;
    if (f->used || !NIL_P(f->out)) put(f, '&');
    f->ok = append_component(f, name) && (put(f, '='), 1) && append_component(f, value);
    return f->ok ? ST_CONTINUE : ST_STOP;
}

static VALUE encode_form(VALUE mod, VALUE pairs) {
    struct form f;
    f.out = Qnil;
    f.used = 0;
    f.ok = 1;
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
    flush(&f);
    rb_obj_freeze(f.out);
    return f.out;
}

void nodelay_rb_init_form(void) {
    fill_kept();
    VALUE native = rb_const_get(nodelay_rb_module, rb_intern("Native"));
    rb_define_singleton_method(native, "encode_form", encode_form, 1);
}
