/**
 * Text in many scripts, for checks that must hold whatever a user writes: words in Devanagari, Thai, Tamil,
 * Arabic, Hebrew, Cyrillic, Greek, Turkish (dotted and dotless i), German (ß), accents composed (NFC) and
 * decomposed (NFD), emoji, CJK, and code terms mixing scripts.
 */
import { rng } from './corpus.js';

export const SCRIPT_WORDS: Record<string, readonly string[]> = {
  devanagari: ['नमस्ते', 'दुनिया', 'खोज', 'संदेश', 'सर्वर', 'त्रुटि'],
  thai: ['สวัสดี', 'ค้นหา', 'ข้อความ', 'เซิร์ฟเวอร์', 'ภาษาไทย'],
  tamil: ['வணக்கம்', 'தேடல்', 'செய்தி', 'சேவையகம்'],
  arabic: ['مرحبا', 'بحث', 'رسالة', 'الخادم', 'خطأ'],
  hebrew: ['שלום', 'חיפוש', 'הודעה', 'שרת'],
  cyrillic: ['привет', 'Поиск', 'сообщение', 'СЕРВЕР', 'ошибка'],
  greek: ['Γειά', 'ΑΝΑΖΗΤΗΣΗ', 'μήνυμα', 'διακομιστής', 'ΣΦΆΛΜΑ'],
  turkish: ['İstanbul', 'ıspanak', 'ISPARTA', 'işlem', 'DİKKAT'],
  german: ['Straße', 'STRASSE', 'Übersicht', 'grüßen'],
  accents: ['café', 'cafe\u0301', 'résumé', 're\u0301sume\u0301', 'naïve', 'Ångström', 'ñandú'],
  emoji: ['🚀', 'deploy🚀', '👍🏽', '🇩🇪', '❤️'],
  cjk: ['记忆断裂', '数据库迁移', 'こんにちは', 'カタカナ', '안녕하세요', '服务器'],
  code: ['chat-send', 'p2.2', 'sp_new', 'файл.txt', '日志_2024', 'αβγ-δ', 'node_modules/pkg'],
  latin: ['docker', 'compose', 'the', 'error', 'timeout', 'deploy', 'Kubernetes'],
};

const SEPARATORS = [' ', ' ', ' ', ', ', '. ', '\n', '\t', ' - ', '/', '“', '”', '(', ') ', '\u3000', '。'];

/** A deterministic generator of multilingual texts (seeded; the same seed gives the same texts). */
export function multilingualTexts(count: number, seed = 1): string[] {
  const random = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const scripts = Object.values(SCRIPT_WORDS);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    // Mostly one or two scripts per message, as people write; now and then any mix.
    const own = [pick(scripts), pick(scripts)];
    const words = 1 + Math.floor(random() * 24);
    let text = '';
    for (let w = 0; w < words; w++) {
      text += pick(random() < 0.85 ? pick(own) : pick(scripts));
      text += pick(SEPARATORS);
    }
    out.push(text);
  }
  return out;
}
