package dev.meridian.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * HTTP/1.1 requests written byte for byte on a plain socket, with the headers a test chooses:
 * {@code java.net.http.HttpClient} will not send a {@code Host} of the test's own, nor leave it
 * out. Each request has its own connection ({@code Connection: close}).
 */
public final class RawHttp {
  private RawHttp() {}

  /** A response: its status, its headers as {@code name: value} lines, its body. */
  public record Answer(int status, List<String> headers, String body) {
    /** The first value of header {@code name} (any case), or null. */
    public String header(String name) {
      String prefix = name.toLowerCase(Locale.ROOT) + ":";
      for (String h : headers) {
        if (h.toLowerCase(Locale.ROOT).startsWith(prefix)) {
          return h.substring(prefix.length()).strip();
        }
      }
      return null;
    }

    /** The names of the headers, lower case. */
    public List<String> headerNames() {
      List<String> names = new ArrayList<>();
      for (String h : headers) {
        names.add(h.substring(0, Math.max(0, h.indexOf(':'))).strip().toLowerCase(Locale.ROOT));
      }
      return names;
    }
  }

  /**
   * {@code METHOD path HTTP/1.1} with exactly {@code headers} (e.g. {@code "Host: x:1"}), to
   * {@code 127.0.0.1:port}; no {@code Host} unless given.
   */
  public static Answer request(int port, String method, String path, String... headers)
      throws IOException {
    StringBuilder req = new StringBuilder(method).append(' ').append(path).append(" HTTP/1.1\r\n");
    for (String h : headers) {
      req.append(h).append("\r\n");
    }
    req.append("Connection: close\r\n");
    if (!method.equals("GET") && !method.equals("HEAD")) {
      req.append("Content-Length: 0\r\n");
    }
    req.append("\r\n");
    return exchange(port, req.toString());
  }

  /** Writes {@code request} as it is and reads the response until the server closes. */
  public static Answer exchange(int port, String request) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(request.getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      InputStream in = s.getInputStream();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      in.transferTo(all);
      String text = all.toString(StandardCharsets.UTF_8);
      int end = text.indexOf("\r\n\r\n");
      if (end < 0) {
        throw new IOException("no complete response head: '" + text + "'");
      }
      String[] head = text.substring(0, end).split("\r\n");
      String[] statusLine = head[0].split(" ", 3);
      List<String> headers = new ArrayList<>(List.of(head).subList(1, head.length));
      return new Answer(Integer.parseInt(statusLine[1]), headers, text.substring(end + 4));
    }
  }
}
