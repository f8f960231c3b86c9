// Just enough JSON for the kit, on the standard library alone: a reader for lab-settings.json and
// the conformance protocol's lines, and the quoting a writer needs. Already written.

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

final class Json {
  private final String text;
  private int at;

  private Json(String text) {
    this.text = text;
  }

  // A JSON value: Map, List, String, Double, Boolean or null. Throws IllegalArgumentException
  // naming the character where the text stops being JSON.
  static Object parse(String text) {
    Json j = new Json(text);
    Object v = j.value();
    j.space();
    if (j.at != text.length()) throw j.error("the end");
    return v;
  }

  // The value as an object, and its members, each of which must be there with its type.
  @SuppressWarnings("unchecked")
  static Map<String, Object> object(Object v, String what) {
    if (!(v instanceof Map)) throw new IllegalArgumentException(what + ": expected a JSON object");
    return (Map<String, Object>) v;
  }

  static double number(Map<String, Object> o, String key) {
    if (!(o.get(key) instanceof Double d)) throw new IllegalArgumentException("\"" + key + "\": expected a number");
    return d;
  }

  static int integer(Map<String, Object> o, String key) {
    return (int) number(o, key);
  }

  static String string(Map<String, Object> o, String key) {
    if (!(o.get(key) instanceof String s)) throw new IllegalArgumentException("\"" + key + "\": expected a string");
    return s;
  }

  static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        default -> {
          if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
          else b.append(c);
        }
      }
    }
    return b.append('"').toString();
  }

  private IllegalArgumentException error(String expected) {
    return new IllegalArgumentException("expected " + expected + " at character " + (at + 1));
  }

  private void space() {
    while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) at++;
  }

  private boolean eat(char c) {
    space();
    if (at < text.length() && text.charAt(at) == c) {
      at++;
      return true;
    }
    return false;
  }

  private Object value() {
    space();
    if (at >= text.length()) throw error("a value");
    char c = text.charAt(at);
    if (c == '{') return members();
    if (c == '[') return elements();
    if (c == '"') return string();
    for (String word : new String[] {"true", "false", "null"}) {
      if (text.startsWith(word, at)) {
        at += word.length();
        return word.equals("null") ? null : Boolean.valueOf(word.equals("true"));
      }
    }
    int start = at;
    while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) at++;
    try {
      return Double.valueOf(text.substring(start, at));
    } catch (NumberFormatException e) {
      at = start;
      throw error("a value");
    }
  }

  private Map<String, Object> members() {
    Map<String, Object> o = new LinkedHashMap<>();
    at++;
    if (eat('}')) return o;
    do {
      space();
      if (at >= text.length() || text.charAt(at) != '"') throw error("a quoted name");
      String key = string();
      if (!eat(':')) throw error("':'");
      o.put(key, value());
    } while (eat(','));
    if (!eat('}')) throw error("',' or '}'");
    return o;
  }

  private List<Object> elements() {
    List<Object> a = new ArrayList<>();
    at++;
    if (eat(']')) return a;
    do a.add(value());
    while (eat(','));
    if (!eat(']')) throw error("',' or ']'");
    return a;
  }

  private String string() {
    StringBuilder b = new StringBuilder();
    at++;
    while (at < text.length()) {
      char c = text.charAt(at++);
      if (c == '"') return b.toString();
      if (c != '\\') {
        b.append(c);
        continue;
      }
      if (at >= text.length()) break;
      char e = text.charAt(at++);
      switch (e) {
        case 'n' -> b.append('\n');
        case 't' -> b.append('\t');
        case 'r' -> b.append('\r');
        case 'b' -> b.append('\b');
        case 'f' -> b.append('\f');
        case 'u' -> {
          if (at + 4 > text.length()) throw error("four hex digits");
          b.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
          at += 4;
        }
        default -> b.append(e);
      }
    }
    throw error("'\"'");
  }
}
