/* Nodelay::Native.json_fast(string, symbolize_names): the Ruby value of a
 * JSON document, built in one walk over the engine's scan of its bytes
 * (nodelay_json_parse: a flat list of items in document order, each
 * container followed by its elements), or Nodelay::Native::JSON_FALLBACK when
 * the document is for JSON.parse to judge (Response#json then calls it). The
 * values are JSON.parse's: Hashes with frozen, deduplicated UTF-8 String keys
 * (Symbols when symbolize_names), Arrays, UTF-8 Strings, Integers, Floats,
 * true, false and nil. */
#include <string.h>

#include <ruby/encoding.h>
#include <ruby/version.h>

#include "call.h"

/* JSON.parse's default max_nesting: it raises JSON::NestingError for a
 * document nested deeper, while the engine takes up to 256 levels, so such a
 * document is left to JSON.parse to raise. */
#define JSON_PARSE_MAX_NESTING 100

/* Ruby 3.2 made rb_hash_new_capa public: a Hash sized once for its pairs. */
#if RUBY_API_VERSION_CODE >= 30200
#define NEW_HASH(pairs) rb_hash_new_capa(pairs)
#else
#define NEW_HASH(pairs) rb_hash_new()
#endif

/* Object keys remembered during one walk, for documents that repeat their
 * keys (an array of records): a hit is a length check and a memcmp instead
 * of a lookup in Ruby's table of interned Strings (hashing the bytes, a fake
 * String, a compare). Slots are picked by length and the outer bytes; only
 * short keys are kept, as long ones rarely repeat. */
#define KEY_CACHE_SLOTS 64
#define KEY_CACHE_MAX_BYTES 32

static VALUE json_fallback;
/* UTF-8's encoding index (below RUBY_ENCODING_INLINE_MAX: it fits the flags). */
static int utf8_index;

struct key_slot {
    const uint8_t *bytes; /* the key's bytes in the document or the tape */
    uint32_t len;
    VALUE key; /* kept alive and unmoved by the walk's frame (the C stack) */
};

/* One walk over a scanned document. It lives on json_fast's stack, which the
 * garbage collector scans: the Strings and Symbols in `keys` stay alive and
 * in place meanwhile. */
struct walk {
    nodelay_json *json; /* freed by walk_free, however the walk ends */
    const nodelay_json_item *items;
    size_t count;
    size_t at; /* the next item */
    int symbolize;
    struct key_slot keys[KEY_CACHE_SLOTS];
};

/* A string item's bytes as a new UTF-8 String. The encoding is stored in
 * the new String's flags directly (rb_utf8_str_new looks the encoding up and
 * checks the String first, a few percent of a document's walk), and as the
 * engine checked that the bytes are UTF-8, so is the coderange, which Ruby
 * would otherwise find by a scan when the String is first compared. */
static VALUE new_string(const nodelay_json_item *item) {
    VALUE s = rb_str_new((const char *)item->value.str, (long)item->len);
    RB_ENCODING_SET_INLINED(s, utf8_index);
    ENC_CODERANGE_SET(s, item->ascii ? ENC_CODERANGE_7BIT : ENC_CODERANGE_VALID);
    return s;
}

/* An object key as JSON.parse makes it: the interned frozen String, which
 * Hash#[]= keeps as it is (no copy), or its Symbol. rb_str_intern makes a
 * Symbol the garbage collector may free, as String#to_sym does; rb_intern3
 * would keep every key of every document (untrusted input) forever. */
static VALUE new_key(struct walk *w, const nodelay_json_item *item) {
    const uint8_t *bytes = item->value.str;
    uint32_t len = item->len;
    struct key_slot *slot = NULL;
    if (len > 0 && len <= KEY_CACHE_MAX_BYTES) {
        slot = &w->keys[(len * 7 + bytes[0] * 3 + bytes[len - 1]) % KEY_CACHE_SLOTS];
        if (slot->len == len && memcmp(slot->bytes, bytes, len) == 0) return slot->key;
    }
    VALUE key = rb_enc_interned_str((const char *)bytes, (long)len, rb_utf8_encoding());
    if (w->symbolize) key = rb_str_intern(key);
    if (slot) *slot = (struct key_slot){bytes, len, key};
    return key;
}

/* The value of the item at w->at and of the items its containers hold;
 * Qundef when the document is to go to JSON.parse after all (too deep for
 * it) or the items are not what the ABI promises. `depth` counts the
 * containers around this item; the engine's limit of 256 bounds the
 * recursion. Runs no Ruby code but allocation, so the document's bytes stay
 * where they are. */
static VALUE walk_value(struct walk *w, int depth) {
    if (w->at >= w->count) return Qundef;
    const nodelay_json_item *item = &w->items[w->at++];
    /* Each element is at least one item (a pair two): a count beyond the
     * items left is not a document the engine scanned. */
    size_t left = w->count - w->at;
    switch (item->kind) {
    case NODELAY_JSON_NULL:
        return Qnil;
    case NODELAY_JSON_FALSE:
        return Qfalse;
    case NODELAY_JSON_TRUE:
        return Qtrue;
    case NODELAY_JSON_INT:
        return LL2NUM(item->value.integer);
    case NODELAY_JSON_FLOAT:
        return DBL2NUM(item->value.real);
    case NODELAY_JSON_STRING:
        return new_string(item);
    case NODELAY_JSON_ARRAY: {
        if (depth >= JSON_PARSE_MAX_NESTING || item->len > left) return Qundef;
        VALUE ary = rb_ary_new_capa((long)item->len);
        for (uint32_t i = 0; i < item->len; i++) {
            VALUE v = walk_value(w, depth + 1);
            if (v == Qundef) return Qundef;
            rb_ary_push(ary, v);
        }
        return ary;
    }
    case NODELAY_JSON_OBJECT: {
        if (depth >= JSON_PARSE_MAX_NESTING || item->len > left / 2) return Qundef;
        VALUE hash = NEW_HASH((long)item->len);
        for (uint32_t i = 0; i < item->len; i++) {
            if (w->at >= w->count) return Qundef;
            const nodelay_json_item *key_item = &w->items[w->at++];
            if (key_item->kind != NODELAY_JSON_STRING) return Qundef;
            VALUE key = new_key(w, key_item);
            VALUE v = walk_value(w, depth + 1);
            if (v == Qundef) return Qundef;
            /* A repeated key keeps its first place and takes the last value,
             * as in JSON.parse. */
            rb_hash_aset(hash, key, v);
        }
        return hash;
    }
    default:
        return Qundef;
    }
}

static VALUE walk_document(VALUE arg) { return walk_value((struct walk *)arg, 0); }

static VALUE walk_free(VALUE arg) {
    struct walk *w = (struct walk *)arg;
    nodelay_json_free(w->json);
    w->json = NULL;
    return Qnil;
}

/* Encodings whose bytes are the document's UTF-8 as they are; JSON.parse
 * transcodes a String in any other encoding first, so those go to it. */
static int utf8_bytes(VALUE str) {
    int index = ENCODING_GET(str);
    return index == rb_ascii8bit_encindex() || index == utf8_index ||
           index == rb_usascii_encindex();
}

static VALUE json_fast(VALUE mod, VALUE str, VALUE symbolize) {
    (void)mod;
    StringValue(str);
    if (!utf8_bytes(str)) return json_fallback;
    nodelay_json *json = NULL;
    nodelay_code code =
        nodelay_json_parse((const uint8_t *)RSTRING_PTR(str), (size_t)RSTRING_LEN(str), &json);
    if (code == NODELAY_E_JSON_UNSUPPORTED) return json_fallback;
    if (code != NODELAY_OK) {
        struct call failed = {0};
        failed.code = code;
        nodelay_rb_raise(&failed);
    }
    struct walk w = {0};
    w.json = json;
    w.symbolize = RTEST(symbolize);
    w.items = nodelay_json_items(json, &w.count);
    /* The tape is freed even when an allocation raises (NoMemoryError). */
    VALUE value = rb_ensure(walk_document, (VALUE)&w, walk_free, (VALUE)&w);
    /* The items point into the String's bytes until walk_free. */
    RB_GC_GUARD(str);
    return value == Qundef ? json_fallback : value;
}

void nodelay_rb_init_json(void) {
    VALUE native = rb_const_get(nodelay_rb_module, rb_intern("Native"));
    rb_define_singleton_method(native, "json_fast", json_fast, 2);
    utf8_index = rb_utf8_encindex();
    /* What json_fast returns for a document JSON.parse must judge (nil is
     * the value of `null`). */
    json_fallback = rb_obj_freeze(rb_obj_alloc(rb_cObject));
    /* A root the garbage collector never moves (this file keeps its address). */
    rb_global_variable(&json_fallback);
    rb_define_const(native, "JSON_FALLBACK", json_fallback);
}
