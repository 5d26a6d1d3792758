package dev.meridian.cli;

import dev.meridian.internal.config.ReferenceCheck;
import dev.meridian.internal.server.FilePublisher;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Locale;
import picocli.CommandLine;

/**
 * An option whose value is one of an enum's constants, spelled in lower case with dashes
 * ({@code delta-ads}), any case accepted. An unknown value is a usage error that lists the valid
 * ones (issue 18): picocli's own enum converter would list them in upper case and twice. Each
 * subclass is both the option's converter and its completion candidates, so help texts show the
 * values with {@code ${COMPLETION-CANDIDATES}}.
 */
abstract class Choice<E extends Enum<E>> implements CommandLine.ITypeConverter<E>, Iterable<String> {
  private final Class<E> type;

  Choice(Class<E> type) {
    this.type = type;
  }

  static String spelling(Enum<?> e) {
    return e.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  @Override
  public E convert(String value) {
    for (E e : type.getEnumConstants()) {
      if (spelling(e).equalsIgnoreCase(value.trim())) {
        return e;
      }
    }
    throw new CommandLine.TypeConversionException(
        "'" + value + "' is not one of " + String.join(", ", this));
  }

  @Override
  public Iterator<String> iterator() {
    return Arrays.stream(type.getEnumConstants()).map(Choice::spelling).iterator();
  }

  static final class LogLevels extends Choice<Logging.Level> {
    LogLevels() {
      super(Logging.Level.class);
    }
  }

  static final class LogFormats extends Choice<Logging.Format> {
    LogFormats() {
      super(Logging.Format.class);
    }
  }

  static final class ReferenceChecks extends Choice<ReferenceCheck> {
    ReferenceChecks() {
      super(ReferenceCheck.class);
    }
  }

  static final class RuleChecks extends Choice<dev.meridian.internal.config.RuleCheck> {
    RuleChecks() {
      super(dev.meridian.internal.config.RuleCheck.class);
    }
  }

  static final class PublishFormats extends Choice<FilePublisher.Format> {
    PublishFormats() {
      super(FilePublisher.Format.class);
    }
  }

  static final class Outputs extends Choice<ResourcePrinter.Format> {
    Outputs() {
      super(ResourcePrinter.Format.class);
    }
  }

  static final class GetOutputs extends Choice<GetCommand.Output> {
    GetOutputs() {
      super(GetCommand.Output.class);
    }
  }

  static final class Profiles extends Choice<ValidateCommand.Profile> {
    Profiles() {
      super(ValidateCommand.Profile.class);
    }
  }

  static final class Modes extends Choice<BootstrapCommand.Mode> {
    Modes() {
      super(BootstrapCommand.Mode.class);
    }
  }
}
