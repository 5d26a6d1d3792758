package dev.meridian.client;

import dev.meridian.xds.ResourceType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Records callbacks as short strings: {@code changed:NAME}, {@code dne:NAME}, {@code error:KIND}. */
class RecordingWatcher implements ResourceWatcher {
  final List<String> events = new ArrayList<>();
  final Map<String, ResourceUpdate> latest = new ConcurrentHashMap<>();
  final List<XdsError> errors = new ArrayList<>();
  final List<Thread> threads = new ArrayList<>();

  @Override
  public synchronized void onChanged(ResourceUpdate update) {
    threads.add(Thread.currentThread());
    latest.put(update.name(), update);
    events.add("changed:" + update.name());
  }

  @Override
  public synchronized void onDoesNotExist(ResourceType type, String name) {
    threads.add(Thread.currentThread());
    latest.remove(name);
    events.add("dne:" + name);
  }

  @Override
  public synchronized void onError(XdsError error) {
    threads.add(Thread.currentThread());
    errors.add(error);
    events.add("error:" + error.kind() + (error.resourceName() == null ? "" : ":" + error.resourceName()));
  }

  @Override
  public synchronized void onResponseProcessed(ResourceType type, String version, boolean nacked) {
    events.add("processed:" + version + (nacked ? ":nack" : ""));
  }

  synchronized List<String> take() {
    List<String> out = new ArrayList<>(events);
    events.clear();
    return out;
  }
}
