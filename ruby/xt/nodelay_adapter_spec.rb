# frozen_string_literal: true

# Faraday's shared adapter examples for the nodelay adapter, with the
# features Faraday's own Net::HTTP adapter spec declares (the adapter
# matches Net::HTTP's behaviour).
RSpec.describe Nodelay::FaradayAdapter do
  features :request_body_on_query_methods, :reason_phrase_parse, :compression, :streaming, :trace_method

  it_behaves_like "an adapter"
end
