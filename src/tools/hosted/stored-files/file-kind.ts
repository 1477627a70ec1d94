// Which text extraction a stored file gets, from what its bytes begin with, its media type and its
// name: a PDF is known by its magic number whatever it was called; a DOCX (a ZIP archive) by its
// type or its `.docx` name together with the ZIP signature; text formats by type or name (unless the
// bytes hold a NUL), and any other file whose bytes are valid UTF-8 without NUL is plain text.
import path from 'node:path';
import type { StoredFileRecord } from '../../../store/types';

export type TextKind = 'pdf' | 'docx' | 'html' | 'json' | 'csv' | 'text';

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
/** ISO 32000-1, 7.5.2: a PDF file begins with `%PDF-`. */
const PDF_MAGIC = Buffer.from('%PDF-');
/** APPNOTE 4.3.7: a ZIP archive begins with a local file header, `PK\x03\x04`. */
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const TEXT_EXTENSIONS = new Set(['.txt', '.md', '.markdown', '.log', '.xml', '.yaml', '.yml', '.ini', '.toml', '.tsv', '.sql', '.py', '.js', '.ts', '.sh']);

function isUtf8Text(content: Buffer): boolean {
  if (content.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(content);
    return true;
  } catch {
    return false;
  }
}

/** The extraction for the file, or null when it has none (a spreadsheet, an image, an archive…). */
export function textKindOf(file: Pick<StoredFileRecord, 'filename' | 'mediaType'>, content: Buffer): TextKind | null {
  const type = file.mediaType.toLowerCase();
  const extension = path.extname(file.filename).toLowerCase();
  if (content.subarray(0, PDF_MAGIC.length).equals(PDF_MAGIC)) return 'pdf';
  const zip = content.subarray(0, ZIP_MAGIC.length).equals(ZIP_MAGIC);
  if (zip && (type === DOCX_TYPE || extension === '.docx')) return 'docx';
  if (zip || type === 'application/pdf' || type === DOCX_TYPE) return null;
  if (type === 'text/html' || type === 'application/xhtml+xml' || extension === '.html' || extension === '.htm') return 'html';
  if (type === 'application/json' || type.endsWith('+json') || extension === '.json') return 'json';
  if (type === 'text/csv' || extension === '.csv') return 'csv';
  // A NUL byte says binary whatever the label (a part sent without a type is labelled text/plain).
  if ((type.startsWith('text/') || TEXT_EXTENSIONS.has(extension)) && !content.includes(0)) return 'text';
  return isUtf8Text(content) ? 'text' : null;
}
