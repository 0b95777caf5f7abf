# frozen_string_literal: true

require_relative "test_helper"

# Response#json against its oracle, JSON.parse: the same values (classes,
# key order, frozen and interned keys, encodings, Float bits) for documents
# the engine's fast path builds, and the same value or the same exception
# (class and message) for those it leaves to JSON.parse.
class TestJSON < Minitest::Test
  # Documents the fast path builds itself (Native.json_fast returns a value).
  FAST = [
    '{"a": {"b": [1, {"c": [[], {}]}]}, "d": [[[[]]]]}',
    "[]", "{}", "[[]]", "[{}]", '{"a": {}}', '{"a": []}',
    '["\\u00e9", "\\u20ac", "\\ud83d\\ude00", "\\uD834\\uDD1E", "\\u0000", "a\\u0041b"]',
    '["\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "x\\"y\\\\z"]',
    '{"\\n\\u00e9": "k", "caf\\u00e9": 1, "😀": "é", "ключ": "значение", "": ""}',
    '["é", "日本語", "😀 emoji", "mixed ascii é"]',
    "[0, -0, 1, -1, 9223372036854775807, -9223372036854775808, 4611686018427387904, 123456789012345678]",
    "[0.1, -1.5e-3, 1e400, -1e400, 1E+2, 1e-2, 0.0, -0.0, 1.7976931348623157e308, 4.9e-324, 1e-400, 2.5E0]",
    '{"a": 1, "b": 2, "a": 3}',
    # Keys that share a slot of the extension's key cache (same length and
    # outer bytes), and keys too long to be cached.
    '[{"aXb": 1, "aYb": 2, "ab": 3, "a": 4}, {"aYb": 5, "aXb": 6, "aXb": 7, "aéb": 8}, {"aYb": [{"aXb": 9}]}]',
    JSON.generate(Array.new(3) do |i|
      { "k" * 40 => i, "#{"k" * 39}j" => 0, "k" * 32 => 1, "#{"k" * 16}x#{"k" * 15}" => i }
    end),
    '{"x": {"k": 1}, "y": 2, "x": [3], "x": null}',
    "1", "-7", "2.5", '"str"', '""', "true", "false", "null",
    " \t\r\n[ 1 , 2 ] \n", " \n{ \"a\" : [ true , false , null ] } \t",
    '{"json_class": "String", "s": "not created"}',
    "#{"[" * 100}#{"]" * 100}",
    # One element per container of every length up to 20.
    "[#{(0..20).map { |n| "[#{Array.new(n) { |i| i }.join(",")}]" }.join(",")}]",
    "{#{(0..40).map { |i| "\"k#{i}\": #{i}" }.join(", ")}}",
  ].freeze

  # Valid documents the fast path leaves to JSON.parse, which returns or raises.
  FALLBACK_VALID = [
    "[9223372036854775808, -9223372036854775809, 123456789012345678901234567890]",
    '["\\ud800"]', '["\\udc00\\ud800"]', '["a\\ud800b"]',
    "#{"[" * 101}#{"]" * 101}", "#{"[" * 300}#{"]" * 300}",
    "[1] // comment", "/* c */ [1]",
  ].freeze

  INVALID = [
    "[1,]", '{"a":1,}', "[01]", "", " ", "[NaN]", "[Infinity]", "[-Infinity]", "[1.]", "[.5]",
    "[+1]", "[1e]", "[tru]", "{1: 2}", "[1] [2]", "[", "]", '{"a"}', '{"a" 1}', "[\"a\tb\"]",
    '["\\x"]', "\u{feff}[]", "'a'", "-", "nul", "[1 2]", "\"abc",
  ].freeze

  # Bytes that are not UTF-8 (JSON.parse takes some of them as they are).
  NOT_UTF8 = ["[\"\xff\"]".b, "{\"\xc3\":1}".b, "\"\xed\xa0\x80\"".b].freeze

  def setup
    @client = Nodelay::Client.new(base_url: TestServer.url, timeout: 5)
  end

  def echo(doc) = @client.post("/echo", body: doc)

  # [:value, v] or [:raise, class, message].
  def outcome
    [:value, yield]
  rescue StandardError => e
    [:raise, e.class, e.message]
  end

  # Deep equality with the classes, Float bits, String encodings and
  # frozenness, and Hash key order and key identity (interned) checked.
  def assert_same_value(expected, actual, where)
    assert_equal expected.class, actual.class, where
    case expected
    when Hash
      assert_equal expected.keys, actual.keys, where
      expected.keys.zip(actual.keys) do |e, a|
        assert a.equal?(e), "#{where}: key #{a.inspect} is not the interned key" unless e.is_a?(String) && !e.frozen?
        assert_same_value(e, a, where)
      end
      expected.each_value.zip(actual.each_value) { |e, a| assert_same_value(e, a, where) }
    when Array
      assert_equal expected.size, actual.size, where
      expected.zip(actual) { |e, a| assert_same_value(e, a, where) }
    when String
      assert_equal [expected.b, expected.encoding, expected.frozen?, expected.valid_encoding?],
                   [actual.b, actual.encoding, actual.frozen?, actual.valid_encoding?], where
    when Float
      assert_equal [expected].pack("G"), [actual].pack("G"), "#{where}: #{expected} vs #{actual}"
    when Symbol
      assert actual.equal?(expected), where
    when NilClass
      assert_nil actual, where
    else
      assert_equal expected, actual, where
    end
  end

  def assert_same_outcome(doc, **options)
    res = echo(doc)
    assert_equal 200, res.status
    oracle = outcome { JSON.parse(doc.b, **options) }
    got = outcome { res.json(**options) }
    where = "#{doc[0, 60].inspect} #{options}"
    if oracle.first == :value
      assert_equal :value, got.first, "#{where}: raised #{got.inspect}"
      assert_same_value(oracle[1], got[1], where)
    else
      assert_equal oracle, got, where
    end
    assert_equal Encoding::BINARY, res.body.encoding, "#{where}: #body stays binary"
    got
  end

  def test_fast_documents_are_json_parse_values
    FAST.each do |doc|
      assert_same_outcome(doc)
      assert_same_outcome(doc, symbolize_names: true)
    end
  end

  def test_the_fast_path_builds_what_it_takes_and_leaves_the_rest
    (FAST + ["[1]".encode("UTF-8"), "[1]".encode("US-ASCII")]).each do |doc|
      value = Nodelay::Native.json_fast(doc, false)
      refute Nodelay::Native::JSON_FALLBACK.equal?(value), "#{doc[0, 60].inspect} fell back"
      assert_same_value(JSON.parse(doc), value, doc[0, 60].inspect)
      assert_same_value(JSON.parse(doc, symbolize_names: true), Nodelay::Native.json_fast(doc, true),
                        doc[0, 60].inspect)
    end
    (FALLBACK_VALID + INVALID + NOT_UTF8).each do |doc|
      assert Nodelay::Native::JSON_FALLBACK.equal?(Nodelay::Native.json_fast(doc, false)), doc.inspect
    end
    # JSON.parse transcodes other encodings first: those are its to read.
    others = ['["é"]'.encode("UTF-16LE"), "[\"\xE9\"]".dup.force_encoding("ISO-8859-1"),
              '["Ã©"]'.encode("ISO-8859-1")]
    others.each do |doc|
      assert Nodelay::Native::JSON_FALLBACK.equal?(Nodelay::Native.json_fast(doc, false)), doc.inspect
    end
    assert_raises(TypeError) { Nodelay::Native.json_fast(nil, false) }
  end

  def test_documents_left_to_json_parse_give_its_value_or_its_error
    (FALLBACK_VALID + INVALID + NOT_UTF8).each do |doc|
      assert_same_outcome(doc)
      assert_same_outcome(doc, symbolize_names: true)
    end
    assert_equal :raise, assert_same_outcome("[1,]")[0]
    assert_equal JSON::NestingError, assert_same_outcome("#{"[" * 101}#{"]" * 101}")[1]
    assert_equal [:value, [9_223_372_036_854_775_808]], assert_same_outcome("[9223372036854775808]")
  end

  def test_the_labs_16_kib_document
    res = @client.get("/json/16384")
    assert_operator res.body.bytesize, :>=, 16_384
    # A copy: JSON.parse relabels a binary String as UTF-8 in place.
    doc = res.body.dup
    assert_same_value(JSON.parse(doc), res.json, "/json/16384")
    assert_same_value(JSON.parse(doc, symbolize_names: true), res.json(symbolize_names: true), "/json/16384")
    assert_equal true, res.json["ok"]
    refute Nodelay::Native::JSON_FALLBACK.equal?(Nodelay::Native.json_fast(res.body, false))
    assert_equal Encoding::BINARY, res.body.encoding
  end

  def test_generated_documents
    random = Random.new(20_261_128)
    200.times do |i|
      value = random_value(random, 0)
      doc = i.even? ? JSON.generate(value) : JSON.pretty_generate(value)
      fast = Nodelay::Native.json_fast(doc.b, i % 4 == 1)
      refute Nodelay::Native::JSON_FALLBACK.equal?(fast), doc[0, 80]
      assert_same_value(JSON.parse(doc, symbolize_names: i % 4 == 1), fast, doc[0, 80])
    end
  end

  def test_other_options_go_to_json_parse
    assert_same_outcome('{"a": [1, 2]}', max_nesting: 1)
    assert_same_outcome('[NaN, -Infinity]', allow_nan: true)
    assert_same_outcome('{"a": "b"}', freeze: true)
    assert_same_outcome('{"a": {"b": 1}}', symbolize_names: true, max_nesting: 2)
    assert_raises(JSON::NestingError) { echo("[[1]]").json(max_nesting: 1) }
    assert echo('{"a": "b"}').json(freeze: true)["a"].frozen?
  end

  def test_a_streamed_response_has_no_json_as_it_has_no_body
    res = @client.get("/json/100") { |_piece| nil }
    assert_nil res.body
    assert_nil res.json
  end

  def test_an_empty_body_raises_what_json_parse_raises
    res = @client.head("/json/100")
    assert_equal "", res.body
    e = assert_raises(JSON::ParserError) { res.json }
    assert_equal outcome { JSON.parse("") }, [:raise, e.class, e.message]
  end

  def test_gc_stress_while_building
    doc = '{"a": [1, 2.5, "x\\u00e9", null, true, {"b": ["c", "d", {"e": "f"}]}], "g": "😀", "a": [3]}'
    res = echo(doc)
    got = []
    GC.stress = true
    begin
      3.times do
        got << res.json
        got << res.json(symbolize_names: true)
        got << echo("[1,]").then { |r| outcome { r.json } }
      end
    ensure
      GC.stress = false
    end
    got.each_slice(3) do |plain, symbols, invalid|
      assert_same_value(JSON.parse(doc), plain, "GC.stress")
      assert_same_value(JSON.parse(doc, symbolize_names: true), symbols, "GC.stress")
      assert_equal outcome { JSON.parse("[1,]") }, invalid
    end
  end

  def test_compaction_keeps_the_values_and_the_fallback_marker
    skip "GC.compact is not supported here" unless GC.respond_to?(:compact)
    res = @client.get("/json/2000")
    kept = 5.times.map { res.json }
    # The oracle's value is made before the compaction too: on Ruby 3.1, after
    # enough churn, GC.compact can leave the table of interned Strings without
    # a key that values still hold, so a JSON.parse made afterwards interns a
    # second "id" (JSON.parse's own values kept across GC.compact fail that
    # comparison the same way). Both kept sides must still agree, key objects
    # included.
    oracle = JSON.parse(res.body.dup)
    GC.compact
    kept.each { |v| assert_same_value(oracle, v, "after GC.compact") }
    assert Nodelay::Native::JSON_FALLBACK.equal?(Nodelay::Native.json_fast("[1,]", false))
    assert_equal outcome { JSON.parse("[1,]") }, outcome { echo("[1,]").json }
  end

  private

  STRING_CHARS = ["a", "Z", " ", '"', "\\", "/", "\b", "\f", "\n", "\r", "\t", "\u0001", "\u001f", "é", "€",
                  "日", "😀", "\u{10FFFF}", "\u2028", "\u007f"].freeze

  def random_string(random)
    Array.new(random.rand(0..12)) { STRING_CHARS[random.rand(STRING_CHARS.size)] }.join
  end

  def random_value(random, depth)
    kind = depth >= 5 ? random.rand(6) : random.rand(8)
    case kind
    when 0 then [nil, true, false][random.rand(3)]
    when 1 then random.rand(-(2**63)..(2**63 - 1)) >> random.rand(0..62)
    when 2 then (random.rand - 0.5) * (10**random.rand(-30..30))
    when 3 then random.rand(-1000..1000) / 8.0
    when 4, 5 then random_string(random)
    when 6 then Array.new(random.rand(0..6)) { random_value(random, depth + 1) }
    else Array.new(random.rand(0..6)) { [random_string(random), random_value(random, depth + 1)] }.to_h
    end
  end
end
