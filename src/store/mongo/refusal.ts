// Which MongoDB errors are the server (or the driver) refusing a write itself, for TurnRepository.refused.
import { MongoInvalidArgumentError, MongoServerError } from 'mongodb';

/**
 * Server error codes that answer the write's content or rights, the same for the same write: a bad
 * value or type, a field name or update the server does not take, a duplicate key, a document over
 * the size limit, a failed validation, no right to write.
 */
const REFUSING_CODES = new Set([
  2, // BadValue
  9, // FailedToParse
  13, // Unauthorized
  14, // TypeMismatch
  40, // ConflictingUpdateOperators
  52, // DollarPrefixedFieldName
  55, // InvalidDBRef
  56, // EmptyFieldName
  57, // DottedFieldName
  66, // ImmutableField
  121, // DocumentValidationFailure
  10334, // BSONObjectTooLarge
  11000, // DuplicateKey
  17419, // a document grown past the size limit by an update
]);

/**
 * A write MongoDB refused: one of REFUSING_CODES without a label asking for it to be tried again, or a
 * document the driver would not send (over the size limit in a bulk write, a key BSON cannot hold). Anything else (no
 * server selected, a network error, a timeout, a primary stepping down) says nothing about the write.
 */
export function isMongoRefusal(err: unknown): boolean {
  if (err instanceof MongoServerError) {
    const code = typeof err.code === 'number' ? err.code : Number.NaN;
    return REFUSING_CODES.has(code) && !err.hasErrorLabel('RetryableWriteError') && !err.hasErrorLabel('TransientTransactionError');
  }
  return err instanceof MongoInvalidArgumentError || (err instanceof Error && err.name === 'BSONError');
}
