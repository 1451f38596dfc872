/// Which country an E.164 number is in, from its calling code: the table
/// behind a phone-code app's country policy (``SendProtection/Countries``).
///
/// Source: the list of ITU-T Recommendation E.164 assigned country codes
/// (the complement to ITU-T E.164 the ITU Operational Bulletin annexes),
/// and for the shared codes, NANPA's area-code assignments (+1: the area
/// code names Canada and each Caribbean or Pacific member; every other
/// area code is the United States) and the Russian and Kazakh plans (+7 6
/// and +7 7 are Kazakhstan). Written into this table on 2026-12-07;
/// countries are ISO 3166-1 alpha-2, and where several share a code
/// (+44: GB, GG, IM, JE) the number reads as the first.
///
/// Codes that name no country (international freephone +800 and shared-cost
/// +808, Inmarsat +870, satellite and international networks +881, +882,
/// +883, +888, premium rate +979) read as `001`, the region
/// libphonenumber gives them: the usual targets of SMS pumping, refused by
/// an allow list that does not name `001`.
public enum CallingCodes {
    /// The pseudo-country of a non-geographic calling code.
    public static let nonGeographic = "001"

    /// The country of `e164` (`+` and digits), nil for an unassigned code.
    public static func country(of e164: String) -> String? {
        let digits = e164.utf8.first == UInt8(ascii: "+") ? Substring(e164.dropFirst()) : Substring(e164)
        // E.164 codes are prefix-free: at most one of the first one, two or three digits is assigned.
        for length in 1...3 where digits.count >= length {
            let code = String(digits.prefix(length))
            guard let country = countries[code] else { continue }
            switch code {
            case "1": return northAmerica[String(digits.dropFirst().prefix(3))] ?? "US"
            case "7": return digits.dropFirst().first.map { "67".contains($0) } == true ? "KZ" : "RU"
            default: return country
            }
        }
        return nil
    }

    /// Every country (and ``nonGeographic``) a number can read as, for checking a policy's list.
    public static let knownCountries: Set<String> = Set(countries.values).union(northAmerica.values).union(["KZ", "GG", "IM", "JE"])

    /// Calling code → country.
    static let countries: [String: String] = {
        var table: [String: String] = [:]
        for entry in assigned.split(separator: " ") {
            let parts = entry.split(separator: ":")
            table[String(parts[0])] = String(parts[1])
        }
        return table
    }()

    private static let assigned = """
        1:US 7:RU 20:EG 27:ZA 30:GR 31:NL 32:BE 33:FR 34:ES 36:HU 39:IT 40:RO 41:CH 43:AT 44:GB 45:DK 46:SE 47:NO \
        48:PL 49:DE 51:PE 52:MX 53:CU 54:AR 55:BR 56:CL 57:CO 58:VE 60:MY 61:AU 62:ID 63:PH 64:NZ 65:SG 66:TH \
        81:JP 82:KR 84:VN 86:CN 90:TR 91:IN 92:PK 93:AF 94:LK 95:MM 98:IR \
        211:SS 212:MA 213:DZ 216:TN 218:LY 220:GM 221:SN 222:MR 223:ML 224:GN 225:CI 226:BF 227:NE 228:TG 229:BJ \
        230:MU 231:LR 232:SL 233:GH 234:NG 235:TD 236:CF 237:CM 238:CV 239:ST 240:GQ 241:GA 242:CG 243:CD 244:AO \
        245:GW 246:IO 247:SH 248:SC 249:SD 250:RW 251:ET 252:SO 253:DJ 254:KE 255:TZ 256:UG 257:BI 258:MZ 260:ZM \
        261:MG 262:RE 263:ZW 264:NA 265:MW 266:LS 267:BW 268:SZ 269:KM 290:SH 291:ER 297:AW 298:FO 299:GL \
        350:GI 351:PT 352:LU 353:IE 354:IS 355:AL 356:MT 357:CY 358:FI 359:BG 370:LT 371:LV 372:EE 373:MD 374:AM \
        375:BY 376:AD 377:MC 378:SM 379:VA 380:UA 381:RS 382:ME 383:XK 385:HR 386:SI 387:BA 389:MK 420:CZ 421:SK \
        423:LI 500:FK 501:BZ 502:GT 503:SV 504:HN 505:NI 506:CR 507:PA 508:PM 509:HT 590:GP 591:BO 592:GY 593:EC \
        594:GF 595:PY 596:MQ 597:SR 598:UY 599:CW 670:TL 672:NF 673:BN 674:NR 675:PG 676:TO 677:SB 678:VU 679:FJ \
        680:PW 681:WF 682:CK 683:NU 685:WS 686:KI 687:NC 688:TV 689:PF 690:TK 691:FM 692:MH \
        800:001 808:001 850:KP 852:HK 853:MO 855:KH 856:LA 870:001 878:001 880:BD 881:001 882:001 883:001 886:TW \
        888:001 960:MV 961:LB 962:JO 963:SY 964:IQ 965:KW 966:SA 967:YE 968:OM 970:PS 971:AE 972:IL 973:BH 974:QA \
        975:BT 976:MN 977:NP 979:001 992:TJ 993:TM 994:AZ 995:GE 996:KG 998:UZ
        """

    /// +1 area codes outside the United States.
    static let northAmerica: [String: String] = {
        var table: [String: String] = [:]
        let canada = """
            204 226 236 249 250 263 289 306 343 354 365 367 368 382 403 416 418 428 431 437 438 450 468 474 506 514 \
            519 548 579 581 584 587 600 604 613 639 647 672 683 705 709 742 753 778 780 782 807 819 825 867 873 879 \
            902 905
            """
        for code in canada.split(separator: " ") { table[String(code)] = "CA" }
        let others = """
            242:BS 246:BB 264:AI 268:AG 284:VG 340:VI 345:KY 441:BM 473:GD 649:TC 658:JM 664:MS 670:MP 671:GU 684:AS \
            721:SX 758:LC 767:DM 784:VC 787:PR 809:DO 829:DO 849:DO 868:TT 869:KN 876:JM 939:PR
            """
        for entry in others.split(separator: " ") {
            let parts = entry.split(separator: ":")
            table[String(parts[0])] = String(parts[1])
        }
        return table
    }()
}
