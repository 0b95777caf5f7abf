# frozen_string_literal: true

# What Faraday's own spec/spec_helper.rb sets up for its adapter specs, less
# its coverage and debugger gems (simplecov, coveralls, pry): WebMock with
# real connections refused but to localhost, Faraday, its spec/support files,
# its RSpec settings. Loaded instead of Faraday's helper (ruby/xt/faraday-specs.sh)
# from the root of Faraday's unpacked sources, with nodelay's Faraday and
# WebMock adapters loaded too.
require "webmock/rspec"
WebMock.disable_net_connect!(allow_localhost: true)

require "faraday"
require "nodelay/faraday"
require "nodelay/webmock"

Dir["./spec/support/**/*.rb"].sort.each { |f| require f }

RSpec.configure do |config|
  config.expect_with :rspec do |expectations|
    expectations.include_chain_clauses_in_custom_matcher_descriptions = true
  end
  config.mock_with :rspec do |mocks|
    mocks.verify_partial_doubles = true
  end
  config.shared_context_metadata_behavior = :apply_to_host_groups
  config.order = :random
  Kernel.srand config.seed
  config.include Faraday::HelperMethods
end
