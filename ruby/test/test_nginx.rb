# frozen_string_literal: true

require_relative "test_helper"
require "tmpdir"
require "fileutils"

# Against nginx (Debian's, when installed): HTTP/1.1 keep-alive, h2c with
# prior knowledge, and HTTPS with a certificate made here (HTTP/2 by ALPN).
class TestNginx < Minitest::Test
  NGINX = ["/usr/sbin/nginx", *ENV.fetch("PATH", "").split(":").map { |d| File.join(d, "nginx") }]
          .find { |p| File.executable?(p) }
  # Seconds to wait for nginx to listen.
  START_TIMEOUT = 10
  SMALL = ("nodelay " * 25 + "\n").b # 201 bytes, workload a's size
  LARGE = Random.new(16).bytes(335 * 1024)

  CONF = <<~NGINX
    worker_processes 1;
    daemon off;
    error_log %<root>s/error.log;
    pid %<root>s/nginx.pid;
    events { worker_connections 256; }
    http {
        access_log off;
        client_body_temp_path %<root>s/body;
        proxy_temp_path %<root>s/proxy;
        fastcgi_temp_path %<root>s/fastcgi;
        uwsgi_temp_path %<root>s/uwsgi;
        scgi_temp_path %<root>s/scgi;
        default_type application/octet-stream;
        server { listen 127.0.0.1:%<h1>d; root %<root>s/docs; }
        server { listen 127.0.0.1:%<h2c>d http2; root %<root>s/docs; }
        server {
            listen 127.0.0.1:%<tls>d ssl http2;
            ssl_certificate %<root>s/cert.pem;
            ssl_certificate_key %<root>s/key.pem;
            root %<root>s/docs;
        }
    }
  NGINX

  def self.free_port = TCPServer.new("127.0.0.1", 0).then { |s| s.addr[1].tap { s.close } }

  def setup
    skip "nginx is not installed" unless NGINX
    skip "openssl is not installed" unless system("openssl version >/dev/null 2>&1")
    # Not under a private (0700) parent: nginx workers started by root drop
    # their privileges and must read the files.
    @root = Dir.mktmpdir("nodelay-ruby-nginx-")
    FileUtils.mkdir_p("#{@root}/docs")
    File.binwrite("#{@root}/docs/small.txt", SMALL)
    File.binwrite("#{@root}/docs/large.bin", LARGE)
    make_certificates or skip "openssl could not make the certificates"
    FileUtils.chmod_R("a+rX", @root)
    @ports = { h1: self.class.free_port, h2c: self.class.free_port, tls: self.class.free_port }
    File.write("#{@root}/nginx.conf", format(CONF, root: @root, **@ports))
    @pid = spawn(NGINX, "-c", "#{@root}/nginx.conf", "-p", @root, %i[out err] => File::NULL)
    wait_listening
  end

  # A CA (ca.pem) and a localhost leaf it signed (cert.pem, key.pem): rustls
  # refuses a self-signed CA certificate as a server's own.
  def make_certificates
    quiet = { %i[out err] => File::NULL, chdir: @root }
    File.write("#{@root}/leaf.ext", "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")
    system("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=nodelay test CA",
           "-keyout", "ca-key.pem", "-out", "ca.pem", **quiet) &&
      system("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
             "-keyout", "key.pem", "-out", "leaf.csr", **quiet) &&
      system("openssl", "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem",
             "-CAcreateserial", "-days", "2", "-extfile", "leaf.ext", "-out", "cert.pem", **quiet)
  end

  def teardown
    if @pid
      Process.kill(:TERM, @pid)
      Process.wait(@pid)
    end
    FileUtils.rm_rf(@root) if @root
  end

  def wait_listening
    deadline = now + START_TIMEOUT
    @ports.each_value do |port|
      begin
        TCPSocket.new("127.0.0.1", port).close
      rescue SystemCallError
        raise "nginx did not listen on #{port}: #{File.read("#{@root}/error.log") rescue ""}" if now > deadline

        sleep 0.05
        retry
      end
    end
  end

  def test_http11_keep_alive
    client = Nodelay::Client.new(base_url: "http://127.0.0.1:#{@ports[:h1]}")
    3.times do
      r = client.get("/small.txt")
      assert_equal [200, SMALL, "HTTP/1.1"], [r.status, r.body, r.version]
    end
    assert_equal LARGE, client.get("/large.bin").body
    pieces = []
    client.get("/large.bin") { |p| pieces << p }
    assert_equal LARGE, pieces.join
    assert_equal 404, client.get("/missing").status
  end

  def test_h2c_prior_knowledge
    client = Nodelay::Client.new(base_url: "http://127.0.0.1:#{@ports[:h2c]}", http2: :prior_knowledge)
    r = client.get("/small.txt")
    assert_equal [200, SMALL, "HTTP/2"], [r.status, r.body, r.version]
    bodies = 4.times.map { Thread.new { client.get("/large.bin").body } }.map(&:value)
    assert(bodies.all? { |b| b == LARGE })
    pieces = []
    client.get("/large.bin") { |p| pieces << p }
    assert_equal LARGE, pieces.join
  end

  def test_https_with_alpn_and_verification
    url = "https://localhost:#{@ports[:tls]}"
    client = Nodelay::Client.new(base_url: url, http2: true, ca_file: "#{@root}/ca.pem")
    r = client.get("/small.txt")
    assert_equal [200, SMALL, "HTTP/2"], [r.status, r.body, r.version]
    assert_raises(Nodelay::TLSError) { Nodelay::Client.new(base_url: url).get("/small.txt") }
  end
end
